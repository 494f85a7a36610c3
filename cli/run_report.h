// Reports of `meshplan run`: per-step lines, the predicted-vs-measured error table, and the
// meshplan.run/1 JSON object (DESIGN.md), printed by rank 0.
#pragma once
#include <string>

#include "core/parallel_config.h"
#include "costmodel/estimate.h"
#include "executor/train/trainer.h"

namespace meshplan::cli {

/// What the cost model predicts for the run, and how the prediction was made.
struct RunPrediction {
  StepEstimate estimate;           // estimate_step on the problem as the CPU executor holds it
  std::string convention;          // bytes-per-param convention used for the prediction
  std::string dtype;               // compute dtype whose peak FLOP/s the prediction used
  std::string precision;           // what the backend really ran in (run JSON's `precision`)
};

/// Measured step time: median of the steps after the first (which pays one-off warm-up costs);
/// the only step when there is one.
double measured_step_s(const exec::TrainResult& r);
/// Communication time per step measured the same way (median over steps 2..n of the per-step
/// maximum over ranks).
double measured_comm_s(const exec::TrainResult& r);

/// "step 3/10  loss 5.4321  time 0.123 s  12345 tok/s  comm 0.012 s  |g| 1.23  lr 3e-4"
std::string step_line(const exec::StepRecord& s, int64_t total_steps);

/// Summary and the error table (quantity, predicted, measured, error %).
std::string run_table(const Problem& p, const ParallelConfig& cfg, const exec::TrainResult& r,
                      const RunPrediction& pred, int world_size);

/// meshplan.run/1: schema, steps[{step, loss, time_s, tokens_per_s, grad_norm, lr, comm_s}],
/// measured{step_s, peak_bytes, rss_peak_bytes, comm_s, tokens_per_s}, predicted{step_s,
/// peak_bytes, compute_s, ...}, error{step_s, peak_bytes} (relative), config, world_size, data,
/// resumed_from_step, checkpoints, provenance. Losses are printed with full double precision.
std::string run_json(const Problem& p, const ParallelConfig& cfg, const exec::TrainResult& r,
                     const RunPrediction& pred, int world_size);

}  // namespace meshplan::cli
