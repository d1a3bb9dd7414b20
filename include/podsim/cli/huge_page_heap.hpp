// Transparent huge pages for `podsim plan`'s heap (huge_page_heap.cpp says why).
#pragma once

#include <optional>
#include <string>

namespace podsim::cli {

// The GLIBC_TUNABLES value that turns on huge pages for malloc's heap, given the current value (null when
// unset) and the first line of /sys/kernel/mm/transparent_hugepage/enabled; nothing when the variable
// already chooses (glibc.malloc.hugetlb set either way: also how a user opts out) or the kernel gives no
// transparent huge pages to programs that ask ("never", or no such file).
std::optional<std::string> huge_page_tunables(const char* current, const std::string& thp_enabled);

// For `podsim plan` only: re-executes this program once with those tunables (glibc reads them only at
// start-up); returns, changing nothing, for any other command, where they are already chosen, or when the
// exec fails.
void restart_plan_with_huge_page_heap(int argc, char** argv);

}  // namespace podsim::cli
