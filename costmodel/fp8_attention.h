// FP8 fused attention against the 16-bit kernel (FrameworkKnobs::fp8_attention): which format, and the ratio.
#pragma once
#include <cstdint>
#include <string>

#include "core/hardware_profile.h"
#include "core/parallel_config.h"

namespace meshplan {

/// The FP8 attention format a job runs: "mxfp8" under the MXFP8 recipe, "fp8" under Transformer Engine's
/// per-tensor recipes (delayed, current scaling), "" where the attention core stays 16-bit (the knob off,
/// no FP8 recipe, or a recipe whose attention no profile measures: blockwise, torchao row-wise).
std::string fp8_attention_dtype(const Job& job);

/// 16-bit time / FP8 time of one layer's fused attention (forward, backward).
struct Fp8AttentionRatio {
  double forward = 1.0;
  double backward = 1.0;
};

/// The profile's measured ratio for `dtype` at exactly this head dimension and window (0 = full causal),
/// log-interpolated in `seq` and held at the measured ends; {1, 1} where `dtype` is empty or no entry
/// matches (the layer is costed as the 16-bit kernel). An exact window only: cuDNN 9.22's FP8 backward
/// with a 128-token window runs about as long as a full causal one (GB200, 2 x 128 heads of 64:
/// 1.73 ms at 4k, 90.3 ms at 32k, against 0.47 and 3.69 ms in bf16), so no other shape stands for it.
Fp8AttentionRatio fp8_attention_ratio(const HardwareProfile& hw, const std::string& dtype, int64_t head_dim,
                                      int64_t window, double seq);

}  // namespace meshplan
