// The plan file (meshplan.plan/1): a self-contained problem plus ranked candidate configurations.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan::cli {

struct PlanFile {
  Problem problem;                        // full model, full hardware profile, job
  std::vector<StepEstimate> candidates;   // best first
  int64_t searched = 0;                   // configurations the planner looked at
  std::map<std::string, int64_t> rejected;  // reason -> count
};

/// JSON text: {"schema": "meshplan.plan/1", "problem": {"model": {HF keys}, "hardware": {profile
/// schema}, "job": {...}}, "candidates": [estimate objects], "searched", "rejected", "provenance"}.
/// Each candidate is the same object estimate_json prints (schema meshplan.estimate/1).
/// Deterministic: same PlanFile -> byte-identical text.
std::string plan_file_json(const PlanFile& plan);

/// Reads a plan file back. Problem and candidate configs are read fully; the estimate numbers are
/// read as printed (rounded), so callers that need exact numbers re-run estimate_step.
/// Every defect is an Error naming the file and the field (e.g. "candidates[2].config.tp").
Result<PlanFile> parse_plan_file(const std::string& text, const std::string& file);
Result<PlanFile> load_plan_file(const std::string& path);

/// Candidate `index` of `plan` (an Error naming --candidate when out of range).
Result<ParallelConfig> plan_candidate(const PlanFile& plan, int index, const std::string& file);

}  // namespace meshplan::cli
