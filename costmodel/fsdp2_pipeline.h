// FSDP2 under a pipeline schedule (torchtitan, pp > 1): the stage stays gathered all step, its
// gradients accumulate unsharded and are reduce-scattered once, after the last backward.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/fsdp2_copies.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"

namespace meshplan {

/// ShardingKnobs::pipeline_keeps_unsharded (torchtitan) with pp > 1, ZeRO 2 or 3 (FSDP2's
/// SHARD_GRAD_OP / FULL_SHARD) and a sharding group of more than one GPU. Then, per pipeline stage
/// (torchtitan apply_fsdp: reshard_after_forward=False under PP; torch.distributed.pipelining
/// backward_maybe_with_nosync: set_requires_gradient_sync(False) and set_reshard_after_backward(False)
/// for every micro-batch, post_backward on every group after the last one; torch 2.5-2.6):
/// - the first micro-batch's forward gathers every unit once; no later pass gathers again;
/// - each backward's 16-bit gradient is added into an unsharded accumulator in the reduce dtype
///   (FSDPParam.to_accumulated_grad_if_needed / accumulate_unsharded_grad_if_needed);
/// - the reduce-scatters of all units run after the last backward, with nothing of the stage left
///   to hide them, and free the accumulators.
bool pipeline_keeps_unsharded(const Problem& p, const ParallelConfig& cfg);

/// Static bytes of a stage of `params` parameters per GPU (TP-local) in that mode: the 16-bit
/// weights unsharded (e per parameter, all step), the gradient accumulator unsharded (r =
/// kFsdp2ReduceBytes, torchtitan's fp32 reduce dtype, whatever the job's byte convention; the sharded
/// gradient exists only once the accumulator is freed), the optimizer state sharded as in `base`. Replaces ZeRO-3's two gathered layers.
StaticBytes pipeline_unsharded_static_bytes(const Problem& p, double params, const StaticBytes& base);

/// The stage's DP seconds per step in that mode, with x_f = the first micro-batch's forward per unit:
///   total   = G + R,  G = gather_ends + L gather_layer,  R = L reduce_layer + reduce_ends
///   exposed = gather_ends + gather_layer + (L - 1) miss(gather_layer, x_f) + R
/// (miss as zero_comm.h's prefetch; everything exposed without overlap). Units and their collectives
/// as FSDP's (costmodel/zero_comm.h sharded_collectives, once per step instead of per micro-batch).
DpComm pipeline_unsharded_dp_comm(const Problem& p, const ParallelConfig& cfg, int stage, const StageTimes& st);

/// FSDP2's copies per block and micro-batch in that mode (M micro-batches; P, d, e, r as
/// fsdp2_copies.h): the one gather's (4 + e) P / d + 2 e P and the one reduce-scatter's copy-in of
/// the fp32 accumulators 2 r P plus its (r + 8) P / d, each shared out over the M micro-batches, and
/// every micro-batch's accumulation: the first casts (e + r) P, the others add (e + 2 r) P.
Fsdp2CopyTimes pipeline_copy_times(const Problem& p, const ParallelConfig& cfg);

/// The same for `P` parameters sharded `d` ways (the routed experts over the expert-data group,
/// costmodel/expert_fsdp.h).
Fsdp2CopyTimes pipeline_copy_times(const Problem& p, const ParallelConfig& cfg, double P, int d);

}  // namespace meshplan
