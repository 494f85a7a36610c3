// The planner's search: every configuration of a SearchSpace is validated, checked for memory and
// ranked by the cost model; the best K are kept. Bounds skip work but never change the answer
// (search_reference evaluates everything and tests compare the two).
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/parallel_config.h"
#include "costmodel/estimate.h"
#include "planner/enumerate.h"
#include "planner/ranking.h"

namespace meshplan {

struct SearchOptions {
  SearchSpace space;
  int top_k = 5;
  Objective objective = Objective::StepTime;
  double dollars_per_gpu_hour = 0;  // for Objective::Cost; 0 = the hardware profile's
  bool pareto = false;              // also collect the memory / step-time Pareto front
  /// Where set, the search also counts the fitting configurations that are better than this estimate
  /// (estimate_better; usually a published or current layout's): its rank among them is that count + 1.
  /// Pruning then also keeps every sibling whose floor does not exceed the reference's step time.
  std::optional<StepEstimate> reference;
  /// Called between layouts with (configurations decided so far, size of the space); for a
  /// progress display. May be empty.
  std::function<void(int64_t done, int64_t total)> progress;
};

struct SearchResult {
  std::vector<StepEstimate> top;     // best first (estimate_better), at most top_k
  std::vector<StepEstimate> pareto;  // non-dominated in (peak memory, step time), memory ascending
  RejectCounts rejected;             // every configuration that is invalid or does not fit
  int64_t space = 0;                 // configurations in the space (what a naive search visits)
  int64_t memory_checks = 0;         // estimate_memory calls
  int64_t evaluated = 0;             // estimate_step calls
  int64_t pruned = 0;                // fitting configurations the time bound proved not top-K
  int64_t better_than_reference = 0; // fitting configurations better than opt.reference (0 without one)
  /// Configurations that pass every rule and fit in memory.
  int64_t fitting() const { return space - rejected.total(); }
};

/// The fast search. Bounds used (each proven safe by the cost model's structure and checked by
/// tests against search_reference):
/// - static memory (weights, gradients, optimizer, other) of any stage does not depend on the
///   micro-batch, recompute, SP, schedule kind or overlap, and activations are >= 0, so one
///   estimate's static bytes bound every sibling's peak from below;
/// - peak memory does not decrease with the micro-batch size (activations in flight are
///   b * min(M, k) with M = B/(dp*b), i.e. min(B/dp, k*b)), so once a micro-batch does not fit,
///   larger ones do not either;
/// - ZeRO stage and DP overlap change neither the compute nor the TP, bubble and p2p terms, except
///   that DP traffic hidden behind backward may slow the compute (never speed it up); so the
///   pipeline_floor_s of a sibling with nothing hidden (overlap off, or dp = 1) bounds every
///   sibling's step time from below, and a sibling whose floor is above the K-th best step time
///   (and, with pareto, is dominated) is skipped. tests/planner/test_search.cpp checks this floor
///   against every sibling directly, so a cost-model change that breaks it fails a test.
SearchResult search(const Problem& p, const SearchOptions& opt);

/// compute + TP + bubble + p2p time: the part of a step the ZeRO stage and DP overlap do not add to.
double pipeline_floor_s(const StepEstimate& e);

/// The plain twin: validates every configuration with classify_config, estimates every valid one
/// with estimate_step, keeps the top K and the Pareto front. Same answer as search(), slower.
SearchResult search_reference(const Problem& p, const SearchOptions& opt);

}  // namespace meshplan
