// Public entry points of the cost model: one configuration in, memory/time/throughput out.
#pragma once
#include <string>
#include <vector>

#include "core/parallel_config.h"

namespace meshplan {

/// What limits a configuration's step time most (largest exposed term), or memory if it does not fit.
/// Host: the GPU mostly waits on the host to issue eager kernels (TimeBreakdown::host_wait_s). New values at the end.
enum class Bottleneck { Compute, TpComm, PpBubble, PpComm, DpComm, Optimizer, Memory, Host };
const char* to_string(Bottleneck b);

/// Per-GPU bytes on the worst pipeline stage (the stage with the largest peak).
struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;    // fp32 master + Adam m, v (sharded by ZeRO >= 1)
  double activations_bytes = 0;  // per-layer stash x layers x micro-batches in flight (+ ZeRO-3 buffers)
  double other_bytes = 0;        // workspace, communication buffers (profile's other_memory)
  double peak_bytes = 0;         // sum of the above
  int worst_stage = 0;           // pipeline rank holding that peak
};

/// Exposed (not overlapped) time per step, seconds. step_s is the sum of the other terms.
struct TimeBreakdown {
  double step_s = 0;
  double compute_s = 0;      // forward + backward (+ recompute) of all micro-batches on one stage
  double tp_comm_s = 0;      // tensor-parallel collectives inside layers
  double pp_comm_s = 0;      // point-to-point activation/gradient transfers on the critical path
  double pp_bubble_s = 0;    // pipeline fill and drain
  double dp_comm_s = 0;      // DP gradient reduction / ZeRO collectives not hidden by backward
  double optimizer_s = 0;    // optimizer step (memory bound)
  double host_wait_s = 0;    // part of compute_s: the GPU waiting on the host to issue work (costmodel/host_launch.h)
};

struct Throughput {
  double tokens_per_s = 0;
  double tflops_per_gpu = 0;  // executed FLOPs (with recompute) per second per GPU / 1e12
  double mfu = 0;             // model FLOPs (no recompute) / (step_s * gpus * peak)
  double hfu = 0;             // hardware FLOPs (with recompute) / (step_s * gpus * peak)
};

struct StepEstimate {
  ParallelConfig config;
  MemoryBreakdown memory;
  TimeBreakdown time;
  Throughput throughput;
  double usable_memory_bytes = 0;  // what the profile offers per GPU
  bool fits = false;               // memory.peak_bytes <= usable_memory_bytes
  Bottleneck bottleneck = Bottleneck::Compute;
};

/// Memory alone: cheap, used by the planner to prune before timing. Assumes validate_config passed.
MemoryBreakdown estimate_memory(const Problem& p, const ParallelConfig& cfg);

/// Full estimate of one training step. Assumes validate_config passed. Allocation-free hot path
/// (the planner calls it hundreds of thousands of times per second).
StepEstimate estimate_step(const Problem& p, const ParallelConfig& cfg);

/// Costs of the pieces a schedule is made of, for the simulator and the executor's comparison.
/// All times are seconds for one micro-batch on one model chunk unless said otherwise.
struct ChunkCosts {
  int layers = 0;
  bool has_embedding = false;           // first chunk
  bool has_lm_head = false;             // last chunk (logits + loss)
  double forward_s = 0;                 // compute + exposed TP communication
  double backward_input_s = 0;          // dX part of backward (+ recompute), incl. TP comm
  double backward_weight_s = 0;         // dW part of backward
  double tp_comm_forward_s = 0;         // included in forward_s
  double tp_comm_backward_s = 0;        // included in backward_input_s
  double activation_bytes = 0;          // stashed from forward until backward, per micro-batch
  double grad_bytes = 0;                // this chunk's gradient bytes per GPU (DP reduction size)
  double dp_reduce_s = 0;               // DP gradient reduction of this chunk's gradients (per step)
  double zero3_gather_s = 0;            // ZeRO-3 all-gather of this chunk's weights (per pass)
  bool gather_once = false;             // FSDP2 under a pipeline: gathered once per step, reduced once
                                        // after the last backward (costmodel/fsdp2_pipeline.h)
  double zero3_refetch_share = 0;       // ZeRO-3: share of layers gathered twice in backward (zero_comm.h)
  double ep_comm_forward_s = 0;         // MoE dispatch/combine all-to-all inside tp_comm_forward_s
  double ep_comm_backward_s = 0;        // ... inside tp_comm_backward_s (with the recomputed layers' repeat)
};

struct StepCosts {
  std::vector<ChunkCosts> chunks;  // pp * v entries; chunk c runs on pipeline rank c % pp
  double p2p_s = 0;                // one activation (or gradient) transfer between stages
  double p2p_bytes = 0;
  double optimizer_s = 0;          // per GPU, worst stage
  double static_bytes_per_stage_max = 0;  // weights+grads+optimizer+other on the worst stage
};

StepCosts step_costs(const Problem& p, const ParallelConfig& cfg);

}  // namespace meshplan
