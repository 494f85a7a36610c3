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
  const char* published_from = "iteration_s";  // or tokens_per_s_per_gpu, tflops_per_gpu, mfu
  bool tuning = false;        // a profile parameter was set on this run (not an independent test)
  std::string regression;     // the publisher's statement that this figure is a regression (not scored)
  bool held_out() const { return !tuning && regression.empty(); }
  std::string skipped;        // non-empty: why the run is not predicted (e.g. context parallelism)
  StepEstimate estimate;
  double published_memory_bytes = 0;  // the source's peak memory per GPU (`memory_gib`), 0 = none
  /// (predicted peak - published peak) / published peak; meaningful when published_memory_bytes > 0.
  double memory_error() const;
};

/// Error statistics of a group of predicted runs (skipped runs are not counted).
struct ErrorStats {
  int runs = 0;
  double mean_abs_error = 0;
  double max_abs_error = 0;
  /// Mean of the signed errors, (predicted - published) / published: the group's bias. Below 0 the model
  /// predicts these runs too fast (too little memory for the memory summary), above 0 too slow.
  double mean_signed_error = 0;
};

struct ValidationReport {
  std::vector<RunPrediction> runs;
  double mean_abs_error = 0;  // over all predicted runs, tuning and held-out
  double max_abs_error = 0;
  ErrorStats held_out;        // runs not used to set any parameter
  ErrorStats tuning;          // runs a profile parameter was set on
  ErrorStats regression;      // runs whose published figure its publisher reports as a regression
  int skipped = 0;
};

/// The configuration and problem a run describes (DP = gpus / (tp*pp) is checked against dp).
Problem run_problem(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw);
ParallelConfig run_config(const ValidationRun& run);

/// Iteration time the source's numbers imply: iteration_s, batch tokens / (tokens/s per GPU x GPUs),
/// FLOPs(source's formula) / (TFLOP/s x GPUs), or FLOPs / (MFU x peak x GPUs).
double published_iteration_s(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw);

/// The published facts a run states about its model, checked against the model under `models:`:
/// `published_params` must equal the exact parameter count, `published_params_billion` must round to
/// it at the source's 0.1 B precision. An Error naming the run and both counts otherwise (the model's
/// keys do not describe the run's model, so its prediction would be of another model).
Result<bool> check_published_facts(const ValidationSet& set, const ValidationRun& run, const ModelSpec& m);

/// Predicts every run; a run whose layout is invalid for the model is an Error naming the run.
Result<RunPrediction> predict_run(const ValidationSet& set, const ValidationRun& run, const HardwareProfile& hw);
Result<ValidationReport> predict_set(const ValidationSet& set, const HardwareProfile& hw);

/// Mean and max |error| and the signed mean of `runs` (all, held-out, tuning, regression); skipped runs are
/// counted apart.
void summarize(ValidationReport& report);

/// Stats of value(run) (mean and max of its magnitude, and its signed mean) over the predicted runs among
/// `runs` for which `keep` is true; value is the run's time error unless given (the peak-memory summary
/// passes RunPrediction::memory_error).
template <class Keep, class Value>
ErrorStats error_stats(const std::vector<RunPrediction>& runs, Keep keep, Value value);
template <class Keep>
ErrorStats error_stats(const std::vector<RunPrediction>& runs, Keep keep);

/// Framework knobs a validation run implies: its attention kernel; DeepSpeed's bucketed ZeRO-3
/// collectives for framework "deepspeed", FSDP's per-unit ones otherwise.
FrameworkKnobs run_framework(const ValidationRun& run);
/// FP8 recipe of a run with fp8: true (fp8_recipe key; default delayed scaling).
Fp8Recipe run_fp8_recipe(const ValidationRun& run);

}  // namespace meshplan

#include <cmath>
namespace meshplan {
template <class Keep, class Value>
ErrorStats error_stats(const std::vector<RunPrediction>& runs, Keep keep, Value value) {
  ErrorStats s;
  double sum = 0.0, signed_sum = 0.0;
  for (const auto& r : runs) {
    if (!r.skipped.empty() || !keep(r)) continue;
    const double v = value(r), e = std::fabs(v);
    ++s.runs;
    sum += e;
    signed_sum += v;
    if (e > s.max_abs_error) s.max_abs_error = e;
  }
  s.mean_abs_error = s.runs ? sum / s.runs : 0.0;
  s.mean_signed_error = s.runs ? signed_sum / s.runs : 0.0;
  return s;
}
template <class Keep>
ErrorStats error_stats(const std::vector<RunPrediction>& runs, Keep keep) {
  return error_stats(runs, keep, [](const RunPrediction& r) { return r.error; });
}
}  // namespace meshplan
