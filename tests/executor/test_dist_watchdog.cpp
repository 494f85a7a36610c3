// The communication watchdog ends a process whose blocking call overstays its timeout, and leaves
// alone one whose calls finish in time.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "executor/mpi/watchdog.h"

using meshplan::exec::Watchdog;
using meshplan::exec::WatchdogScope;

TEST_CASE("dist: watchdog ends a process stuck in a blocking call") {
  const auto start = std::chrono::steady_clock::now();
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Watchdog w(0.5, "test rank");
    WatchdogScope scope(&w, "a test receive");
    std::this_thread::sleep_for(std::chrono::seconds(30));  // "hangs"
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(elapsed < 5.0);
}

TEST_CASE("dist: watchdog lets calls that finish in time pass") {
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    Watchdog w(1.0, "test rank");
    for (int i = 0; i < 5; ++i) {
      WatchdogScope scope(&w, "a short call");
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    std::_Exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
