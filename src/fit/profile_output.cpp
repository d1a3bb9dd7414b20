#include "podsim/fit/profile_output.hpp"

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <filesystem>

#include "podsim/core/atomic_write.hpp"

namespace podsim::fit {

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
