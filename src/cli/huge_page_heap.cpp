// Why: `podsim plan` keeps every candidate that fits in memory (about a million rows for a MoE space, a few
// hundred MB) and forks one worker per simulated candidate (SimGrid runs once per process). With 4 KiB
// pages each fork copies the page tables of that heap: copy_page_range was ~20% of the Mixtral 8x7B search
// in the README, and the workers' copy-on-write faults more. With glibc's malloc on transparent huge pages
// (tunable glibc.malloc.hugetlb=1, glibc 2.35 and later; older glibc ignores it) the same search takes 53 s
// instead of 88 s on two cores, with the same result. A single `podsim run` forks once from a small process
// and gains nothing, so only the plan command restarts itself.
#include "podsim/cli/huge_page_heap.hpp"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>

namespace podsim::cli {

std::optional<std::string> huge_page_tunables(const char* current, const std::string& thp_enabled) {
  std::string tunables = current ? current : "";
  if (tunables.find("glibc.malloc.hugetlb") != std::string::npos) return std::nullopt;
  // The kernel marks the mode in force with brackets: "always [madvise] never".
  if (thp_enabled.find("[always]") == std::string::npos && thp_enabled.find("[madvise]") == std::string::npos)
    return std::nullopt;
  return tunables.empty() ? "glibc.malloc.hugetlb=1" : tunables + ":glibc.malloc.hugetlb=1";
}

void restart_plan_with_huge_page_heap(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "plan") != 0) return;
  std::string thp;
  std::getline(std::ifstream("/sys/kernel/mm/transparent_hugepage/enabled"), thp);
  const char* current = std::getenv("GLIBC_TUNABLES");
  auto tunables = huge_page_tunables(current, thp);
  if (!tunables) return;
  std::optional<std::string> saved = current ? std::optional<std::string>(current) : std::nullopt;
  if (::setenv("GLIBC_TUNABLES", tunables->c_str(), 1) != 0) return;
  ::execv("/proc/self/exe", argv);
  // The exec failed (no /proc): go on with small pages and the environment as it was.
  if (saved)
    ::setenv("GLIBC_TUNABLES", saved->c_str(), 1);
  else
    ::unsetenv("GLIBC_TUNABLES");
}

}  // namespace podsim::cli
