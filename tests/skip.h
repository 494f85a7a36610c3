// Reports the current test as skipped to ctest (exit code 4, SKIP_RETURN_CODE) when a resource is absent.
#pragma once
#include <cstdio>
#include <cstdlib>

namespace meshplan_test {
/// Each TEST_CASE runs as its own ctest test, so leaving the process with 4 marks just this case skipped.
[[noreturn]] inline void skip(const char* why) {
  std::printf("SKIPPED: %s\n", why);
  std::fflush(stdout);
  std::_Exit(4);
}
}  // namespace meshplan_test
