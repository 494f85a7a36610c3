// Deliberately failing, skipping and passing test cases for the harness self-check
// (check_harness.cmake): run through ctest with the same skip settings as every real test, each must
// be reported as what it is. Not part of the suite itself (its own CTestTestfile, see CMakeLists).
#include <catch2/catch.hpp>

#include "skip.h"

TEST_CASE("probe_four_failures") {
  for (int i = 0; i < 4; ++i) CHECK(i < 0);  // 4 failed assertions: Catch2's own exit code would be 4
}

TEST_CASE("probe_77_failures") {
  for (int i = 0; i < 77; ++i) CHECK(i < 0);  // Catch2's own exit code would be 77 = the skip code
}

TEST_CASE("probe_fails_then_skips") {
  CHECK(1 + 1 == 3);
  meshplan_test::skip("resource absent (after a failed assertion: must be reported failed)");
}

TEST_CASE("probe_throws") { throw std::runtime_error("unexpected exception"); }

TEST_CASE("probe_skips") { meshplan_test::skip("resource absent (nothing failed: a real skip)"); }

TEST_CASE("probe_passes") { CHECK(1 + 1 == 2); }
