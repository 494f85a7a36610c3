// Published speed of fused attention kernels by sequence length (HardwareProfile::attention_kernel_speeds).
#pragma once
#include "core/framework_knobs.h"
#include "core/hardware_profile.h"

namespace meshplan {

/// Head dimension of the FlashAttention-1 curve that flash-attn's Triton kernel takes at and above it.
inline constexpr double kTritonTileHeadDim = 64.0;

/// The profile's curve for `kernel` with the head dimension closest to `head_dim` (equal distance:
/// the larger), or nullptr. flash-attn's Triton kernel (llm-foundry's attn_impl triton) always takes
/// FlashAttention-1's curve: none of its own is published and its author states that its forward +
/// backward is "slightly slower" than flash-attn 1.x's CUDA kernel (flash_attn/flash_attn_triton.py
/// header, a kernel "only tested on A100", whose tests default to head dim 64). Above head dim 64 it
/// keeps FA1's head-dim-64 curve rather than FA1's own head-dim-128 one: the Triton kernel runs the
/// same 128 x 128 query x key tiles at every head dimension (forward BLOCK = 128, 4 warps at d <= 64
/// else 8; backward BLOCK_M = BLOCK_N = 128, 8 warps: _flash_attn_forward / _bwd_kernel configs), so a
/// wider head only adds tensor-core work per tile and its FLOP rate does not fall, while FA1's CUDA
/// kernels at head dim 128 take smaller tiles for their shared memory and run 10-15 % slower per FLOP
/// (Dao 2023 Fig. 4 and 7: A100 83 vs 97, H100 137 vs 156 TFLOP/s at 16k). OpenAI Triton's kernel (TritonOps) takes
/// the profile's "triton-ops" curve, else FlashAttention-1's: Dao 2023 (arXiv:2307.08691, Fig. 4, A100,
/// causal) measures the two within 10 % of each other from 512 to 16k tokens (head dim 128: 50-80 vs
/// 55-83 TFLOP/s), and neither uses Hopper's warpgroup MMA.
const AttentionKernelSpeed* attention_speed_curve(const HardwareProfile& hw, FusedAttentionKernel kernel,
                                                  double head_dim);

/// Forward + backward FLOP/s of `c` at `seq` tokens, as the benchmark counts FLOPs: linear in
/// log(seq) between two points, the first/last point's value below/above the curve's range.
double curve_flops_per_s(const AttentionKernelSpeed& c, double seq);

/// Fraction of a kernel's forward + backward time spent in the forward (the curves publish only the
/// sum). With the profile's forward/backward efficiencies for the kernel, e_f and e_b (fused_attention_*
/// for FlashAttention-2, cudnn_attention_* for cuDNN), and the backward's 2.5x the forward's FLOPs:
///   (1 / e_f) / (1 / e_f + 2.5 / e_b);
/// 1 / 3.5 (both passes at the same FLOP/s) where the profile has none.
double forward_time_share(const HardwareProfile& hw, FusedAttentionKernel kernel);

}  // namespace meshplan
