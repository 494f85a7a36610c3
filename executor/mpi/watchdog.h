// Watchdog: ends this process when one blocking communication call lasts longer than a timeout,
// so that a dead or stuck peer can never make the job hang forever (mpirun then ends the others).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace meshplan::exec {

class Watchdog {
 public:
  /// timeout_s <= 0 disables it (no thread is started). `label` names this process in the
  /// message, e.g. "rank 3 (host a)".
  Watchdog(double timeout_s, std::string label);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Marks the start / end of one blocking call; `what` must be a string literal (kept as is).
  void enter(const char* what);
  void leave();
  double timeout_s() const { return timeout_s_; }

 private:
  void run();

  double timeout_s_;
  std::string label_;
  std::atomic<int64_t> since_ns_{-1};  // steady-clock start of the current blocking call; -1 none
  std::atomic<const char*> what_{""};
  std::mutex mutex_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::thread thread_;
};

/// RAII: Watchdog::enter in the constructor, leave in the destructor. Null watchdog: nothing.
class WatchdogScope {
 public:
  WatchdogScope(Watchdog* w, const char* what) : w_(w) {
    if (w_) w_->enter(what);
  }
  ~WatchdogScope() {
    if (w_) w_->leave();
  }

 private:
  Watchdog* w_;
};

}  // namespace meshplan::exec
