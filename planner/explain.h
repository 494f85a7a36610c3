// `plan --explain`: how many candidates each rule rejected, how much work the bounds saved, and
// why the winner beats the runner-up (which configuration values and which time terms differ).
#pragma once
#include <string>
#include <vector>

#include "costmodel/estimate.h"
#include "planner/search.h"

namespace meshplan {

/// One exposed time term of two estimates (runner-up minus winner, seconds).
struct TermDifference {
  const char* term = "";  // "compute", "tp_comm", "pp_bubble", "pp_comm", "dp_comm", "optimizer"
  double winner_s = 0;
  double runner_up_s = 0;
  double delta_s() const { return runner_up_s - winner_s; }
};

/// The six exposed time terms of both, in TimeBreakdown order.
std::vector<TermDifference> term_differences(const StepEstimate& winner, const StepEstimate& runner_up);

/// Configuration fields that differ, e.g. {"virtual stages 8 vs 4", "zero 2 vs 1"}.
std::vector<std::string> config_differences(const ParallelConfig& winner,
                                            const ParallelConfig& runner_up);

/// The --explain text: rejection counts by rule with descriptions, the work done, and the
/// winner/runner-up comparison (or why there is no runner-up).
std::string explain_text(const Problem& p, const SearchOptions& opt, const SearchResult& r);

}  // namespace meshplan
