// Probe timing: agreed iteration counts for collectives, medians for local kernels.
#include "executor/calibrate/probe_timer.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace meshplan::exec {

double probe_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double time_collective_call(Communicator& group, const std::function<void()>& call, double target_s,
                            int max_iters) {
  double t0 = probe_now_s();
  call();
  float warm = static_cast<float>(probe_now_s() - t0);
  group.all_reduce(&warm, 1, ReduceOp::Max);
  const int iters = std::clamp(static_cast<int>(target_s / std::max(warm, 1e-7f)), 1, max_iters);
  group.barrier();
  t0 = probe_now_s();
  for (int i = 0; i < iters; ++i) call();
  float per_call = static_cast<float>((probe_now_s() - t0) / iters);
  group.all_reduce(&per_call, 1, ReduceOp::Max);
  return per_call;
}

double time_local_call(const std::function<void()>& call, double target_s, int max_iters) {
  call();  // warm-up: caches, page faults
  std::vector<double> times;
  const double start = probe_now_s();
  while (static_cast<int>(times.size()) < max_iters &&
         (times.size() < 3 || probe_now_s() - start < target_s)) {
    const double t0 = probe_now_s();
    call();
    times.push_back(probe_now_s() - t0);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace meshplan::exec
