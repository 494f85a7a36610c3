// HBM traffic of FSDP2's per-parameter sharding on the compute stream: copy-in before each all-gather,
// copy-out of the gathered parameters after it, and the gradients' copy-in before each reduce-scatter.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Bytes one transformer block moves on one GPU per micro-batch, forward and backward, under ZeRO-3
/// with FSDP2 (ShardingKnobs::fsdp2_copies; torchtitan). FSDP2 shards each parameter on its own, so
/// the all-gather runs on one flat buffer that must be packed and unpacked (pytorch/pytorch
/// torch/distributed/_composable/fsdp/_fsdp_collectives.py, foreach_all_gather /
/// foreach_all_gather_copy_out / foreach_reduce, torch 2.5-2.6): with P the block's parameters on this
/// TP rank, d the FSDP degree, e the 16-bit param dtype and r the reduce dtype's bytes (torchtitan's
/// mixed_precision_reduce default float32: 4):
///   every all-gather: copy-in of the fp32 local shard cast to e      (4 + e) P / d
///                     copy-out split_with_sizes_copy to the params    2 e P
///   every reduce-scatter: copy-in chunk_cat of the gradients cast     (e + r) P
///                         the reduced shard added to the fp32 grad    (r + 8) P / d
/// One gather in forward, one in backward (reshard_after_forward; a recomputed forward runs with the
/// backward's gather, zero_comm.h), one reduce-scatter in backward. The root unit (embedding, final
/// norm, output layer) is not counted here. Llama 3 8B block (218.1 M), d 8, bf16: 4.75 P = 1.04 GB
/// forward, 12.25 P = 2.67 GB backward.
/// The reduce dtype's bytes: torchtitan's mixed_precision_reduce default float32 (job_config.py).
constexpr double kFsdp2ReduceBytes = 4.0;

EagerBytes fsdp2_copy_bytes(double block_params, int fsdp_degree, double element_bytes, double reduce_bytes);

/// Seconds those copies take on one GPU per block and micro-batch (memory bound, the job's 16-bit
/// dtype, fp32 reduce), forward and backward; zero unless ZeRO-3 with FSDP2's copies over a
/// sharding group of more than one GPU. Under a pipeline that keeps the stage unsharded
/// (costmodel/fsdp2_pipeline.h, ZeRO 2 or 3) they are pipeline_copy_times. The closed form (step.cpp) and the simulator's chunk costs
/// both take them from here.
struct Fsdp2CopyTimes {
  double forward_s = 0;
  double backward_s = 0;
};
Fsdp2CopyTimes fsdp2_copy_times(const Problem& p, const ParallelConfig& cfg);

}  // namespace meshplan
