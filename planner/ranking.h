// Ranking of estimates: the objective, the tie-breaking order of configurations, and the bounded
// best-K list the search keeps.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan {

/// What "best" means. For a fixed GPU count, global batch and sequence length each is a strictly
/// monotone function of the step time (tokens/s = B*S/step, MFU = model FLOPs/(step*N*peak),
/// $/token = N*price*step/(B*S)), so all rank identically; the objective picks the figure shown.
enum class Objective { StepTime, TokensPerS, Mfu, Cost };
const char* to_string(Objective o);
std::optional<Objective> parse_objective(const std::string& s);

/// Total order that breaks the last ties (equal step time and memory): fewer pipeline stages, smaller TP, lower ZeRO
/// stage, 1F1B < interleaved < ZB-H1 < GPipe, fewer virtual stages, less recompute, SP on, larger
/// micro-batch, overlap on. Makes the ranking independent of the enumeration order.
bool config_less(const ParallelConfig& a, const ParallelConfig& b);
/// Ranking order of two fitting estimates: step time, then lower peak memory, then config_less.
bool estimate_better(const StepEstimate& a, const StepEstimate& b);

/// The figure the objective shows for an estimate: seconds, tokens/s, MFU or dollars per million
/// tokens. `dollars_per_gpu_hour` 0 takes the profile's.
double objective_value(const Problem& p, Objective o, double dollars_per_gpu_hour,
                       const StepEstimate& e);
/// Unit label of objective_value: "s", "tokens/s", "MFU", "$/Mtok".
const char* objective_unit(Objective o);

/// The best K estimates seen so far under estimate_better; offer() is O(K).
class TopK {
 public:
  explicit TopK(int k) : k_(k) {}
  /// Keeps `e` if it is among the best K so far.
  void offer(const StepEstimate& e);
  /// True once K estimates are held: then worst_step_s() bounds what can still enter.
  bool full() const { return static_cast<int>(best_.size()) >= k_; }
  double worst_step_s() const { return best_.back().time.step_s; }
  const std::vector<StepEstimate>& best() const { return best_; }

 private:
  int k_;
  std::vector<StepEstimate> best_;  // sorted, best first
};

}  // namespace meshplan
