// Reports the current test as skipped to ctest (exit kSkipExitCode = SKIP_RETURN_CODE) when a
// resource is absent. A test that already failed an assertion is reported failed instead.
#pragma once
#include <cstdio>
#include <cstdlib>

namespace meshplan_test {

/// ctest's SKIP_RETURN_CODE for every test executable (tests/CMakeLists.txt). catch_main.cpp maps
/// all Catch2 failures to exit 1, so only skip() below can produce this code.
constexpr int kSkipExitCode = 77;

/// Failed assertions so far in the running test case (counted by catch_main.cpp's listener).
int failed_assertions_in_current_test();

/// Each TEST_CASE runs as its own ctest test, so leaving the process with kSkipExitCode marks just
/// this case skipped. After a failed assertion it exits 1: a failure is never hidden as a skip.
[[noreturn]] inline void skip(const char* why) {
  const int failed = failed_assertions_in_current_test();
  if (failed > 0) {
    std::printf("FAILED: %d assertion(s) failed before skip(\"%s\") was called\n", failed, why);
    std::fflush(stdout);
    std::_Exit(1);
  }
  std::printf("SKIPPED: %s\n", why);
  std::fflush(stdout);
  std::_Exit(kSkipExitCode);
}

}  // namespace meshplan_test
