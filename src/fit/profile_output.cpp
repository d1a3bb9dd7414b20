#include "podsim/fit/profile_output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace podsim::fit {
namespace {

// The same write-then-rename as report::atomic_write; the fit layer sits below report, so it has its own.
void atomic_write(const std::string& path, const std::string& content) {
  std::string tmp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp));
    out << content;
    out.flush();
    if (!out) throw std::runtime_error(fmt::format("cannot write {}", tmp));
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace

std::string today_utc() {
  std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

std::string command_line(const std::string& subcommand, const std::vector<std::string>& words) {
  std::string out = "podsim calibrate " + subcommand;
  for (const auto& w : words)
    if (!w.empty()) out += " " + w;
  return out;
}

void write_checked(const std::string& path, const std::string& yaml,
                   const std::function<void(const std::string&)>& load) {
  if (auto dir = std::filesystem::path(path).parent_path(); !dir.empty())
    std::filesystem::create_directories(dir);
  std::string tmp = path + ".check.yaml";
  atomic_write(tmp, yaml);
  try {
    load(tmp);
  } catch (...) {
    std::filesystem::remove(tmp);
    throw;
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace podsim::fit
