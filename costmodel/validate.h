// Predicts published training runs (validation/*.yaml) with one hardware profile and reports errors.
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "core/validation_runs.h"
#include "costmodel/estimate.h"

namespace meshplan {

struct RunPrediction {
  std::string set;            // validation file stem
  std::string label;
  double published_s = 0;     // published iteration time (or derived from published TFLOP/s)
  double predicted_s = 0;
  double error = 0;           // (predicted - published) / published
  bool derived = false;       // published_s was derived from TFLOP/s with the paper's FLOP formula
  StepEstimate estimate;
};

struct ValidationReport {
  std::vector<RunPrediction> runs;
  double mean_abs_error = 0;
  double max_abs_error = 0;
};

/// The configuration and problem a run describes (DP = gpus / (tp*pp) is checked against dp).
Problem run_problem(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw);
ParallelConfig run_config(const ValidationRun& run);

/// Iteration time the paper's numbers imply: iteration_s, or FLOPs(paper's formula) / (TFLOP/s x GPUs).
double published_iteration_s(const ValidationSet& set, const ValidationRun& run);

/// Predicts every run; a run whose layout is invalid for the model is an Error naming the run.
Result<RunPrediction> predict_run(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw);
Result<ValidationReport> predict_set(const ValidationSet& set, const HardwareProfile& hw);

/// Mean and max |error| of `runs`.
void summarize(ValidationReport& report);

}  // namespace meshplan
