// Published speed of fused attention kernels by sequence length (HardwareProfile::attention_kernel_speeds).
#pragma once
#include "core/framework_knobs.h"
#include "core/hardware_profile.h"

namespace meshplan {

/// The profile's curve for `kernel` with the head dimension closest to `head_dim` (equal distance:
/// the larger), or nullptr. flash-attn's Triton kernel (llm-foundry's attn_impl triton) always takes
/// FlashAttention-1's curve: none of its own is published and its author states that its forward +
/// backward is "slightly slower" than flash-attn 1.x's CUDA kernel (flash_attn/flash_attn_triton.py
/// header), so the FA1 curve is an upper bound on its speed. OpenAI Triton's kernel (TritonOps) takes
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
