// Pareto front of peak memory against step time.
#include "planner/pareto.h"

#include <algorithm>

#include "planner/ranking.h"

namespace meshplan {

bool pareto_dominates(const StepEstimate& a, const StepEstimate& b) {
  const double am = a.memory.peak_bytes, bm = b.memory.peak_bytes;
  const double at = a.time.step_s, bt = b.time.step_s;
  if (am > bm || at > bt) return false;
  if (am < bm || at < bt) return true;
  return config_less(a.config, b.config);
}

void ParetoFront::offer(const StepEstimate& e) {
  for (const StepEstimate& q : points_)
    if (pareto_dominates(q, e)) return;
  points_.erase(std::remove_if(points_.begin(), points_.end(),
                               [&](const StepEstimate& q) { return pareto_dominates(e, q); }),
                points_.end());
  auto at = std::upper_bound(points_.begin(), points_.end(), e,
                             [](const StepEstimate& a, const StepEstimate& b) {
                               if (a.memory.peak_bytes != b.memory.peak_bytes)
                                 return a.memory.peak_bytes < b.memory.peak_bytes;
                               return estimate_better(a, b);
                             });
  points_.insert(at, e);
}

bool ParetoFront::dominates(double peak_bytes, double step_s) const {
  for (const StepEstimate& q : points_) {
    if (q.memory.peak_bytes > peak_bytes) break;  // sorted by memory
    if (q.time.step_s < step_s) return true;
  }
  return false;
}

}  // namespace meshplan
