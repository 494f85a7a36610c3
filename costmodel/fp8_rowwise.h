// torchao's float8 dynamic row-wise scaling (torchtitan's "rowwise" recipe): linear layers costed from
// a measured table of whole-linear speedups over bf16 by GEMM shape, not from an FP8 GEMM rate.
#pragma once
#include "core/hardware_profile.h"
#include "core/parallel_config.h"

namespace meshplan {

/// The table's speedup at the forward GEMM's M x K x N: piecewise linear in log(M), log(K), log(N)
/// between the measured points (trilinear), clamped to the table's ends outside them.
double rowwise_speedup(const Fp8LinearSpeedup& table, double M, double K, double N);

/// Forward GEMM seconds of one layer's linear layers under torchao row-wise FP8 (their dgrad and wgrad
/// take the same, as under every recipe here). torchao converts each nn.Linear separately and
/// torchtitan's Llama keeps wq, wk, wv apart, so every linear gets the speedup of its own shape:
/// M = b s tokens, wq h x h/t, wk and wv h x kv/t, wo h/t x h, MLP up (and gate) h x f/t, down f/t x h,
/// each at bf16 speed (`dense_peak`, the profile's GEMM curve) divided by the measured speedup. The
/// table measures LayerNorm -> Linear -> Sigmoid forward + backward (pytorch/ao
/// docs/static/fp8-rowwise-perf.png), so the row-wise casts (amax and cast of the input, weight and
/// output gradient along both axes, costmodel/fp8.cpp adds none for this recipe) and the CUTLASS
/// row-wise kernel's speed are in it; the norm and sigmoid in its denominator soften both ends a little.
struct LinearGemmTimes {
  double qkv = 0, out = 0, up = 0, down = 0;
};
LinearGemmTimes rowwise_linear_times(const Problem& p, const ParallelConfig& cfg, double dense_peak, double tokens);

}  // namespace meshplan
