// Attention core by kernel kind (fused FlashAttention-style vs materialized scores): stashed bytes,
// executed FLOPs and kernel time of softmax(Q K^T) V for one layer and micro-batch on one GPU.
#pragma once
#include <string>

#include "core/framework_knobs.h"
#include "core/hardware_profile.h"
#include "core/model_spec.h"
#include "costmodel/flops.h"

namespace meshplan {

/// Bytes of the attention core one layer stashes for backward, for `b` sequences of `s` tokens,
/// whole layer (not divided by TP; heads split by TP). With a = heads, e = activation element bytes:
///   materialized: (dropout ? 2e + 1 : e) a s^2 b   softmax output (+ its 1-byte dropout mask and
///                                                  the dropout output), Korthikanti et al. 2022
///   fused:        4 a s b                          one fp32 log-sum-exp per row and head (the output
///                                                  itself is the out-projection input, counted there;
///                                                  dropout masks are regenerated from the RNG seed)
double attention_core_stash_bytes(const ModelSpec& m, AttentionKind k, double b, double s, double e);

/// Fraction of the s x s score blocks a fused causal kernel computes: with n = ceil(s / 128) blocks
/// of 128 rows/columns (FlashAttention-2's tile), the n(n+1)/2 blocks on or below the diagonal out
/// of n^2, i.e. (n + 1) / (2n). Materialized kernels compute the whole square.
double causal_block_fraction(double seq);

/// Sliding-window attention (ModelSpec::sliding_window w): each query attends to itself and the w - 1
/// keys before it (transformers' sliding-window mask). Of the s x s score square that is
///   s (s + 1) / 2 pairs for s <= w (plain causal), else w (w + 1) / 2 + (s - w) w,
/// returned as a fraction of s^2 (-> 1/2 for causal at large s, -> w/s for s >> w).
double window_pair_fraction(double seq, double window);

/// The score blocks (128 x 128, FlashAttention-2's tile) a fused kernel computes with that window, as a
/// fraction of all n^2 blocks, n = ceil(s / 128): row block i computes min(i + 1, ceil(w / 128) + 1)
/// blocks (the diagonal, the full blocks inside the window and the block cut by its edge). Equals
/// causal_block_fraction(s) when w >= s.
double window_block_fraction(double seq, double window);

/// Chunked attention (ModelSpec::attention_chunk C, Llama 4): a query attends to the keys of its own
/// C-token block up to itself (transformers' chunked causal mask). With s = q C + r that is
///   q C (C + 1) / 2 + r (r + 1) / 2 pairs, as a fraction of s^2 (plain causal for C >= s).
double chunk_pair_fraction(double seq, double chunk);

/// The 128 x 128 score blocks a fused kernel computes under that mask, as a fraction of n^2,
/// n = ceil(s / 128): each block of c = ceil(C / 128) tiles computes c (c + 1) / 2 (a causal kernel of
/// length C), the last partial one likewise. Equals causal_block_fraction(s) when C >= s.
double chunk_block_fraction(double seq, double chunk);

/// Extra FLOPs the attention backward executes beyond twice the forward (hardware FLOPs, not model
/// FLOPs): fused kernels recompute Q K^T in the backward (one more scores GEMM, Dao 2023 Alg. 2);
/// materialized kernels read the stashed softmax output: 0. Counted like Megatron, without the
/// causal discount, so it is comparable to the model FLOPs.
double attention_backward_extra_flops(const LayerFlops& f, AttentionKind k);

/// Seconds of the attention core of one layer, one micro-batch, on one GPU (heads split by `tp`).
struct AttentionCoreTime {
  double forward_s = 0;   // Q K^T, softmax (+ dropout), P V
  double backward_s = 0;  // gradients of the above (fused: with the recomputed scores)
  double forward_elementwise_s = 0;  // part of forward_s that is memory bound (softmax, dropout)
};

/// Materialized: two batched GEMMs of 2 b s^2 h / t each through the profile's GEMM curve, plus the
/// softmax and dropout bytes through HBM (9 b a s^2 / t, costmodel/README.md); backward = twice the
/// GEMMs and twice the element-wise bytes. Fused: the causal fraction of the same GEMM work at
/// FlashAttention's efficiency relative to a plain GEMM (kFusedForwardRelEfficiency,
/// kFusedBackwardRelEfficiency), backward = 5 GEMMs (recomputed Q K^T, dV, dP, dQ, dK) per 2 of the
/// forward; each pass at least its HBM traffic (Q, K, V, O, dO, LSE reads and writes).
/// `kernel` picks which of the profile's figures applies: its published speed curve for the kernel
/// when it has one (costmodel/attention_speed.h: forward + backward time = 3.5 x 2 b s^2 h / t, the
/// causal half of the forward's 4 b s^2 h / t, over curve(s), split by forward_time_share), else the kernel's
/// measured efficiencies (fused_kernel_efficiency below), else the GEMM-relative default.
/// Sliding windows (fused kernels only; a materialized softmax masks but still computes the square):
/// the mean over the model's layers, sliding_window_layers of them at window_block_fraction (or, with
/// a published speed curve, window_pair_fraction of the square at the curve's speed for length
/// min(s, 2w): a windowed query does the work of a causal one at length 2w), the others as above.
/// Chunked attention likewise: chunked_layers at chunk_block_fraction (or chunk_pair_fraction of the
/// square at the curve's speed for length C: each block is a causal kernel of length C).
/// `apply_window` false costs every layer as full causal attention (context parallelism's steps,
/// whose window depends on global positions: costmodel/README.md "Context parallelism").
/// `fp8_dtype` ("fp8", "mxfp8"; "" = 16-bit): the fused kernel runs on FP8 inputs at the profile's
/// measured ratio for the shape (costmodel/fp8_attention.h).
AttentionCoreTime attention_core_time(const HardwareProfile& hw, double peak_flops_per_s, const ModelSpec& m,
                                      AttentionKind k, double b, double s, int tp, double element_bytes,
                                      FusedAttentionKernel kernel = FusedAttentionKernel::FlashAttention2,
                                      bool apply_window = true, const std::string& fp8_dtype = "");

/// The profile's {forward, backward} fraction of peak for `kernel`: cuDNN's figures when the kernel
/// is cuDNN and the profile has them, else the FlashAttention-2 figures (fused_attention_*); 0 where
/// the profile has neither (then the GEMM-relative default applies).
struct FusedEfficiency {
  double forward = 0;
  double backward = 0;
};
FusedEfficiency fused_kernel_efficiency(const HardwareProfile& hw, FusedAttentionKernel kernel);

/// FlashAttention's achieved FLOP/s relative to a large cuBLAS GEMM on the same GPU (not fitted to
/// any validation run). Dao 2023 (FlashAttention-2, arXiv:2307.08691, abstract): the forward reaches
/// 50-73 % of the A100's peak, where large BF16 GEMMs reach ~80 % (this repo's A100 curve); its
/// backward is slower than its forward in every benchmark of the paper (Fig. 4-6). Shah et al. 2024
/// (FlashAttention-3, arXiv:2407.08608) report 75 % of the H100's BF16 peak forward, where the
/// measured GEMM (issue 10) reaches 84 %. The middle of these ratios: 0.8 forward, 0.7 backward.
constexpr double kFusedForwardRelEfficiency = 0.8;
constexpr double kFusedBackwardRelEfficiency = 0.7;

}  // namespace meshplan
