// Watchdog thread: wakes once a second and ends the process when a blocking call overstays.
#include "executor/mpi/watchdog.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <utility>

namespace meshplan::exec {

static int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

Watchdog::Watchdog(double timeout_s, std::string label)
    : timeout_s_(timeout_s), label_(std::move(label)) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { run(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  thread_.join();
}

void Watchdog::enter(const char* what) {
  what_.store(what);
  since_ns_.store(now_ns());
}

void Watchdog::leave() { since_ns_.store(-1); }

void Watchdog::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stop_cv_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
    const int64_t since = since_ns_.load();
    if (since < 0) continue;
    const double waited_s = static_cast<double>(now_ns() - since) * 1e-9;
    if (waited_s <= timeout_s_) continue;
    // Only async-signal-safe-ish work from here: the main thread is stuck inside MPI, so MPI
    // cannot be called; ending the process makes mpirun terminate the remaining ranks.
    std::fprintf(stderr,
                 "meshplan: %s: %s made no progress for %.1f s (a peer rank died or hangs; "
                 "timeout --comm-timeout-s %g); ending this rank\n",
                 label_.c_str(), what_.load(), waited_s, timeout_s_);
    std::fflush(stderr);
    _exit(1);
  }
}

}  // namespace meshplan::exec
