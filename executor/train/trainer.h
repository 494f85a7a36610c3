// The training loop of `meshplan run`: builds this rank's chunks from the plan, runs the pipeline
// schedule for each step, reduces gradients (DP/ZeRO), clips, steps AdamW, measures, checkpoints.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"
#include "executor/backend.h"
#include "executor/mpi/process_groups.h"
#include "executor/optim/adamw.h"
#include "executor/optim/lr_schedule.h"

namespace meshplan::exec {

struct TrainOptions {
  int64_t steps = 5;                 // total optimizer steps of the run (a resumed run included)
  std::string data_path;             // empty: synthetic seeded tokens
  uint64_t seed = 1234;              // initialisation and synthetic data
  LrSchedule lr;                     // total_steps should equal `steps`
  float max_grad_norm = 1.0f;        // global-norm clipping; <= 0 disables
  AdamWConfig adamw;
  int64_t bucket_bytes = 4 << 20;    // DP all-reduce bucket (ZeRO-0)
  std::string checkpoint_dir;        // empty: no checkpoints
  int64_t checkpoint_every = 0;      // steps between checkpoints; 0: only after the last step
  bool resume = false;               // continue from the latest complete checkpoint
  // Test hooks (hidden flags): the last world rank SIGKILLs itself ...
  int64_t test_kill_at_step = -1;            // ... in the middle of this step's pipeline
  int64_t test_crash_in_checkpoint = -1;     // ... half-way through writing this step's shard
  /// Called on every rank after each step (rank 0 prints progress).
  std::function<void(const struct StepRecord&)> on_step;
};

/// One optimizer step as every rank measured it (loss and norm are global; times are this
/// rank's, and the same on all ranks up to the final synchronisation).
struct StepRecord {
  int64_t step = 0;          // 0-based index of the step
  double loss = 0;           // mean cross-entropy over the global batch
  double grad_norm = 0;      // before clipping
  double lr = 0;
  double time_s = 0;         // wall time of the step (without checkpoint writes)
  double tokens_per_s = 0;   // global_batch * seq_len / time_s
  double comm_s = 0;         // time inside communication calls (this rank while running; in
                             // TrainResult the maximum over ranks)
};

struct TrainResult {
  std::vector<StepRecord> steps;         // the steps this run executed
  int64_t resumed_from_step = -1;        // completed steps found in the checkpoint; -1 fresh start
  uint64_t peak_bytes = 0;               // max over ranks: high-water mark of our tensors
  std::vector<uint64_t> stage_peak_bytes;  // per pipeline stage, max over its ranks
  uint64_t peak_rss_bytes = 0;           // max over ranks: VmHWM
  std::string data_description;
  int64_t tokens_per_step = 0;
  std::vector<int64_t> checkpoints_written;  // completed-step counts
};

/// Collective over every rank of `groups`. All ranks return the same Error when the plan cannot
/// run (validation, data, checkpoint); bugs assert.
Result<TrainResult> train(const Problem& problem, const ParallelConfig& cfg, ProcessGroups& groups,
                          Backend& backend, const TrainOptions& options, const std::string& where);

/// Hash of what a checkpoint's shards depend on (model shape, configuration, sequence length,
/// world size, seed): resuming with anything else is refused.
uint64_t plan_fingerprint(const Problem& problem, const ParallelConfig& cfg, int world_size,
                          uint64_t seed);

}  // namespace meshplan::exec
