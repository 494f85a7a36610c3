// FP8 primary weights (Megatron-Core --fp8-param-gather): the linear layers' weights kept only as FP8,
// and the distributed optimizer's all-gather of the updated weights in FP8.
#pragma once
#include "core/parallel_config.h"

namespace meshplan {

/// FrameworkKnobs::fp8_param_gather under a Transformer Engine recipe (delayed, current, blockwise,
/// mxfp8; torchao's row-wise keeps 16-bit weights).
bool fp8_primary_weights(const Problem& p);

/// 16-bit weight bytes a GPU does not hold for `layers` transformer layers when the weights are FP8
/// tensors: Transformer Engine's FP8 weight data (costmodel/fp8.h fp8_weight_bytes_per_param, already
/// counted by fp8_stage_bytes) is the parameter itself, so the linear layers' 16-bit copy (w bytes per
/// parameter, the job's convention) goes: per layer, w * (P_dense / d_w + P_experts / d_we), with
/// P_dense the layer's parameters less its norms and P_experts its routed experts' on this GPU. ZeRO 0-2
/// keep whole weights (d = 1). ZeRO-3 (Megatron-FSDP) keeps an FP8 shard instead of a 16-bit one:
/// max(0, w - q) / d per parameter, q the FP8 bytes (Hopper's current scaling with its transpose and
/// MXFP8's row- and column-wise data are as large as the 16-bit copy: nothing saved, and the model does
/// not charge more). 0 unless fp8_primary_weights.
double fp8_param_saved_bytes(const Problem& p, const ParallelConfig& cfg, int layers);

/// Bytes the ZeRO-1/2 all-gather of a stage's updated weights sends, for `params` parameters per GPU
/// of which `layers` transformer layers: w per parameter, but 1 byte for the linear layers' FP8 data
/// under delayed, current and blockwise scaling (their scales are a few bytes per tensor or block).
/// MXFP8 gathers the 16-bit weights into the gradient buffer and quantizes after
/// (reuse_grad_buf_for_mxfp8_param_ag: Megatron-Bridge asserts it with fp8_param_gather), so w.
double param_gather_bytes(const Problem& p, const ParallelConfig& cfg, double params, int layers);

}  // namespace meshplan
