// The Pareto front of memory against step time: configurations no other beats on both.
#pragma once
#include <vector>

#include "costmodel/estimate.h"

namespace meshplan {

/// Non-dominated estimates in (peak bytes, step seconds). A dominates B when A needs no more memory
/// and no more time, and is strictly better in one of them (or, on an exact tie in both, comes
/// first under config_less). This is a strict partial order, so the front is the same whatever the
/// order of offer() calls.
class ParetoFront {
 public:
  /// Adds `e` unless an estimate already held dominates it; drops those `e` dominates.
  void offer(const StepEstimate& e);
  /// True when some estimate held needs at most `peak_bytes` and strictly less than `step_s`:
  /// then any configuration with that memory and a step time >= step_s is dominated.
  bool dominates(double peak_bytes, double step_s) const;
  /// Sorted by peak memory ascending (so step time descending).
  const std::vector<StepEstimate>& points() const { return points_; }

 private:
  std::vector<StepEstimate> points_;  // memory ascending
};

/// a dominates b (see ParetoFront).
bool pareto_dominates(const StepEstimate& a, const StepEstimate& b);

}  // namespace meshplan
