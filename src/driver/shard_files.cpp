#include "podsim/driver/shard_files.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <filesystem>
#include <set>

#include "podsim/core/error.hpp"

namespace podsim::driver {

namespace fs = std::filesystem;

std::vector<std::string> find_shard_files(const std::vector<std::string>& dirs, const ShardFilePattern& p) {
  std::vector<std::string> files;
  std::set<int> seen;
  int count = 0;
  for (const auto& dir : dirs) {
    if (!fs::is_directory(dir)) throw InputError(fmt::format("{}: not a directory", dir));
    for (const auto& e : fs::directory_iterator(dir)) {
      std::smatch m;
      std::string name = e.path().filename().string();
      if (!std::regex_match(name, m, p.name)) continue;
      int n = std::stoi(m[2]);
      if (count && n != count)
        throw InputError(
            fmt::format("{}: {} files of different splits ({} and {} shards)", dir, p.what, count, n));
      count = n;
      if (seen.insert(std::stoi(m[1])).second) files.push_back(e.path().string());
    }
  }
  if (files.empty())
    throw InputError(fmt::format("{}: no {} files (did the shards finish?)", dirs.front(), p.shown));
  std::vector<int> missing;
  for (int i = 0; i < count; ++i)
    if (!seen.count(i)) missing.push_back(i);
  if (!missing.empty())
    throw InputError(
        fmt::format("{}(s) {} of {} have not written their file yet; rerun them ({}) and merge again", p.what,
                    fmt::join(missing, ", "), count, fmt::format(fmt::runtime(p.rerun), count)));
  return files;
}

}  // namespace podsim::driver
