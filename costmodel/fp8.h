// FP8 training per Transformer Engine recipes: which GEMMs run in FP8, the cast/transpose kernels
// they add, and the FP8 weight copies and scaling state they keep in memory.
#pragma once
#include "core/hardware_profile.h"
#include "core/parallel_config.h"

namespace meshplan {

/// Peak FLOP/s of the linear-layer GEMMs (QKV, out-projection, MLP; forward, dgrad and wgrad):
/// the profile's "fp8" peak under an FP8 recipe (Transformer Engine runs te.Linear /
/// te.LayerNormLinear / te.LayerNormMLP in FP8 inside fp8_autocast), else `dense_peak`. The
/// attention BMMs stay in 16 bits (TE's FP8 dot-product attention is a separate opt-in,
/// NVTE_FP8_DPA), and so does the LM head (Megatron-Core keeps the output layer out of FP8 unless
/// asked). A profile without an fp8 peak is refused earlier (core/job_features.h).
/// Under a recipe whose forward GEMMs accumulate in split (full) precision, blockwise and MXFP8
/// ("FP8 block scaling requires split accumulation"; neither recipe overrides MMParams'
/// use_split_accumulator=True for fprop: TransformerEngine common/recipe/__init__.py), that peak is
/// scaled by the profile's fp8_gemm_relative_efficiency, as linear_gemm_backward_peak's.
double linear_gemm_peak(const Problem& p, double dense_peak);

/// Peak FLOP/s of the backward's linear-layer GEMMs (dgrad and wgrad): the FP8 peak times the
/// profile's fp8_gemm_relative_efficiency under an FP8 recipe, else `dense_peak`. Transformer
/// Engine runs them with split accumulation in every recipe (Float8CurrentScaling:
/// fp8_gemm_dgrad / fp8_gemm_wgrad MMParams(use_split_accumulator=True), fprop False; delayed
/// scaling's module defaults likewise), and that is how the FP8 rates behind the ratio were
/// measured (torch._scaled_mm's default use_fast_accum=False in stas00/ml-engineering's
/// mamf-finder.py; cuBLASLt without CUBLASLT_MATMUL_DESC_FAST_ACCUM in `meshplan calibrate`). The
/// fast-accumulation forward of the delayed and current recipes has no measured rate, so it keeps
/// the BF16 curve at the FP8 peak. torchao row-wise: `dense_peak` (its measured speedups, fp8_rowwise.h).
double linear_gemm_backward_peak(const Problem& p, double dense_peak);

/// Whether FP8 GEMMs on this GPU take only the TN layout (both operands K-major), so that Transformer
/// Engine's delayed and current recipes keep FP8 transposes of the weights and write transposed
/// copies of the saved inputs and output gradients for the backward. TE's own rule
/// (transformer_engine/pytorch/utils.py is_non_tn_fp8_gemm_supported): non-TN FP8 GEMMs on compute
/// capability 10.x-11.x and >= 13 (Blackwell data-center parts), TN only before (Hopper 9.0, Ada 8.9).
/// A profile without gpu.compute_capability keeps the transposes (what the model did before).
bool fp8_gemm_needs_transposes(const HardwareProfile& hw);

/// Extra element-wise HBM bytes of one layer, one micro-batch, on one GPU, for the FP8 casts of
/// the linear layers' inputs and output gradients. `tokens` = b * s/cp, `t` = tp, width of each
/// GEMM input: QKV h, out-projection h, MLP up h, MLP down f (gated: f too).
/// Per element cast from 16 bits: read 2 + write 1 bytes. Delayed scaling (amax from history)
/// casts in one pass; current scaling (Float8CurrentScaling) reads the tensor once more for its
/// amax: 5 bytes. Hopper FP8 GEMMs need both operands K-major, so the backward also writes the FP8
/// transposes of the saved inputs and the output gradients (read 1, write 1), which Blackwell does not
/// need (fp8_gemm_needs_transposes). Blockwise (1x128 /
/// 128x128 scales) and MXFP8 (1x32 E8M0 scales) quantize row- and column-wise copies from the
/// 16-bit tensor in one pass (read 2, write 2) instead of transposing.
struct Fp8Overhead {
  double forward_bytes = 0;
  double backward_bytes = 0;
};
Fp8Overhead fp8_cast_bytes(const Problem& p, const ParallelConfig& cfg, double tokens);

/// Extra bytes per linear-layer weight parameter kept for FP8: the FP8 copy (1 byte) and, where the
/// GPU needs it (`transposes`, fp8_gemm_needs_transposes), its transpose (1 byte) for delayed and
/// current scaling (TE caches both across micro-batches);
/// the row- and column-wise copies plus their scales for blockwise (one fp32 per 128x128 block
/// each, 2 * 4/16384) and MXFP8 (one byte per 32 elements each, 2/32). 0 without FP8.
double fp8_weight_bytes_per_param(Fp8Recipe r, bool transposes = true);

/// Change to one layer's stashed activations (one micro-batch, one GPU; bytes, negative = fewer) when
/// the linear layers save their FP8 inputs (FrameworkKnobs::fp8_saves_quantized_inputs) under a
/// Transformer Engine recipe, against costmodel/activations.h's 16-bit count (e bytes per element).
/// TE keeps the quantized input of each GEMM for its wgrad (pytorch/module/linear.py: `saved_inputmat =
/// inputmat`, the FP8 tensor with column-wise usage only; layernorm_linear.py and layernorm_mlp.py
/// likewise for ln_out and the fc2 input), q = 1 byte per element plus its scales (MXFP8 one E8M0
/// byte per 32, blockwise one fp32 per 128, per-tensor scales nothing per element). With T = b*s/cp
/// tokens on the GPU, t = tp and n = t under sequence parallelism (else 1):
///   QKV and MLP fc1 inputs (the norm outputs, in the replicated part): 2 (q - e) T h / n
///   out-projection input: + q T h / t (its FP8 copy; the fused attention still keeps the 16-bit output)
///   fc2 input (the activation's output, f wide): (q - e) T f / t
/// The norm inputs, Q, K, V and the fc1 outputs stay 16-bit. MoE models: the two MLP terms for the
/// dense layers' share only (the experts' quantized inputs are counted in costmodel/moe_cost.h's MoE stash).
/// 0 without a TE recipe, for torchao (torchtitan) and under full recompute (only the layer input is kept).
double fp8_stash_delta_bytes(const Problem& p, const ParallelConfig& cfg, Recompute r);

/// Bytes per element a linear layer keeps of its input for the backward: q (1 byte plus the recipe's
/// scales, as above) when fp8_stash_delta_bytes applies, else the activation element bytes.
double fp8_stashed_input_bytes(const Problem& p);

/// Scaling state of one layer's four FP8 modules (QKV, out-projection, MLP up, MLP down):
/// delayed scaling keeps an amax history per FP8 tensor (forward: input, weight, output; backward:
/// grad output, grad input), fp32, amax_history_len = 1024 by default (TE DelayedScaling), plus
/// one scale and inverse scale each; the other recipes keep no history. Bytes per GPU per layer.
double fp8_scaling_state_bytes_per_layer(Fp8Recipe r);

/// Transformer Engine's DelayedScaling amax_history_len default.
constexpr double kFp8AmaxHistoryLen = 1024;

}  // namespace meshplan
