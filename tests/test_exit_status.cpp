// What main prints and returns for an error that reaches it: bad input is status 2, a bug status 1, and a
// result that breaks an invariant says so.
#include <gtest/gtest.h>

#include <cstdio>
#include <stdexcept>

#include "podsim/cli/exit_status.hpp"
#include "podsim/cli/huge_page_heap.hpp"
#include "podsim/core/error.hpp"

namespace {

std::pair<int, std::string> report(const std::exception& e) {
  std::FILE* f = std::tmpfile();
  int code = podsim::cli::report_failure(e, f);
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  std::fclose(f);
  return {code, text};
}

}  // namespace

TEST(ExitStatus, InputErrorIsStatusTwo) {
  auto [code, text] = report(podsim::InputError("w.yaml:3:5: model.layers: must be at least 1"));
  EXPECT_EQ(code, 2);
  EXPECT_EQ(text, "podsim: error: w.yaml:3:5: model.layers: must be at least 1\n");
}

TEST(ExitStatus, InvariantViolationIsAnInternalErrorNamingTheInvariant) {
  auto [code, text] = report(podsim::InvariantViolation("MFU 1.3 is above 100%"));
  EXPECT_EQ(code, 1);
  EXPECT_EQ(text.rfind("podsim: internal error: result breaks an invariant: MFU 1.3 is above 100%\n", 0), 0u)
      << text;
  EXPECT_NE(text.find("this is a bug in podsim"), std::string::npos);
}

TEST(ExitStatus, AnyOtherExceptionIsAnInternalError) {
  auto [code, text] = report(std::runtime_error("vector::at"));
  EXPECT_EQ(code, 1);
  EXPECT_EQ(text.rfind("podsim: internal error: vector::at\n", 0), 0u) << text;
  auto [code2, text2] = report(std::logic_error("x"));
  EXPECT_EQ(code2, 1);
  EXPECT_EQ(text2.find("invariant"), std::string::npos) << text2;
}

// `podsim plan` restarts itself with malloc on transparent huge pages (cli/huge_page_heap.cpp) unless the
// environment already chooses or the kernel has none to give.
TEST(HugePageHeap, TunablesAddTheHugePageSettingOnlyWhereItHelps) {
  using podsim::cli::huge_page_tunables;
  EXPECT_EQ(huge_page_tunables(nullptr, "always [madvise] never"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables(nullptr, "[always] madvise never"), "glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables("glibc.malloc.arena_max=2", "always [madvise] never"),
            "glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1");
  EXPECT_EQ(huge_page_tunables(nullptr, "always madvise [never]"), std::nullopt);
  EXPECT_EQ(huge_page_tunables(nullptr, ""), std::nullopt);  // no such file
  // Already set (the restarted process; or a user's opt-out with =0): left alone, so it restarts once.
  EXPECT_EQ(huge_page_tunables("glibc.malloc.hugetlb=1", "always [madvise] never"), std::nullopt);
  EXPECT_EQ(huge_page_tunables("glibc.malloc.hugetlb=0", "always [madvise] never"), std::nullopt);
}
