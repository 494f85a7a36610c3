// Sustained-clock soak: windows of back-to-back GEMM calls, the settled rate, the slowest rank.
#include "executor/calibrate/soak_probe.h"

#include <algorithm>
#include <cassert>
#include <cmath>

namespace meshplan::exec {

std::vector<double> soak_windows(const std::function<double(int)>& run_batch, double per_call_s, double soak_s) {
  assert(per_call_s > 0.0 && soak_s > 0.0);
  const double window_s = soak_s / 10.0;
  std::vector<double> out;
  double elapsed = 0.0, per_call = per_call_s;
  while (elapsed < soak_s) {
    const int n = static_cast<int>(std::clamp(window_s / per_call, 1.0, 1e6));
    const double t = run_batch(n);
    if (!(t > 0.0)) break;  // a timer that reports nothing: keep what was measured
    per_call = t / n;
    out.push_back(per_call);
    elapsed += t;
  }
  return out;
}

SoakMeasurement run_soak_probe(Communicator& group, const std::function<double(int)>& run_batch,
                               double burst_s_per_call, double soak_s) {
  SoakMeasurement m;
  if (!(soak_s > 0.0) || !(burst_s_per_call > 0.0)) return m;
  group.barrier();  // every rank loads its device at the same time
  m.window_s_per_call = soak_windows(run_batch, burst_s_per_call, soak_s);
  const size_t n = m.window_s_per_call.size(), tail = std::min<size_t>(3, n);
  float mine = 0.0f;
  for (size_t i = n - tail; i < n; ++i) mine += static_cast<float>(m.window_s_per_call[i] / tail);
  std::vector<float> all(static_cast<size_t>(group.size()));
  group.all_gather(&mine, all.data(), 1);
  m.soak_s = soak_s;
  m.burst_s_per_call = burst_s_per_call;
  m.sustained_s_per_call = *std::max_element(all.begin(), all.end());
  if (m.sustained_s_per_call > 0.0)
    m.fraction = std::clamp(burst_s_per_call / m.sustained_s_per_call, 1e-4, 1.0);
  return m;
}

}  // namespace meshplan::exec
