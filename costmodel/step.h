// One training step assembled from per-stage costs: compute, exposed TP/PP/DP communication,
// pipeline bubble, optimizer; MFU/HFU and the bottleneck. Implements costmodel/estimate.h.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/estimate.h"

namespace meshplan {

/// Per-micro-batch costs of one pipeline rank (all its chunks), seconds.
struct StageTimes {
  double compute_s = 0;      // forward + backward (+ recompute) compute
  double tp_comm_s = 0;      // exposed TP communication
  double forward_s = 0;      // forward incl. exposed TP comm
  double backward_s = 0;     // backward (input + weight) incl. recompute and exposed TP comm
  double backward_weight_s = 0;
  double host_wait_s = 0;    // part of compute_s: waiting on the host (costmodel/host_launch.h)
  double total() const { return compute_s + tp_comm_s; }
};

StageTimes stage_times(const Problem& p, const ParallelConfig& cfg, int stage);

/// DP / ZeRO communication of pipeline rank `stage` per step and the part of it that is exposed.
struct DpComm {
  double total_s = 0;
  double exposed_s = 0;
};

DpComm dp_comm(const Problem& p, const ParallelConfig& cfg, int stage, const StageTimes& st);

/// All-reduce of the tied word-embedding gradient between the first and the last pipeline stage
/// (Megatron, pp > 1 with tie_word_embeddings, or with MTP modules, whose stage holds an embedding copy);
/// 0 otherwise. Counted in pp_comm_s.
double tied_embedding_sync_s(const Problem& p, const ParallelConfig& cfg);

/// Optimizer step of one GPU of `stage`: memory-bound Adam over its local (ZeRO-sharded) parameters.
double optimizer_time_s(const Problem& p, const ParallelConfig& cfg, int stage);

}  // namespace meshplan
