// Gradient bytes a data-parallel reduction sends per parameter, and DeepSpeed BF16_Optimizer's
// separate fp32 accumulation pass after every micro-batch's backward.
#pragma once
#include "core/parallel_config.h"

namespace meshplan {

/// Bytes per parameter on the wire in the DP gradient reduction: FrameworkKnobs::dp_reduce_bytes when
/// set (DeepSpeed's bf16 communication_data_type: 2), else the convention's gradient bytes.
double grad_reduce_bytes_per_param(const Problem& p);

/// Bytes per parameter that the accumulation pass moves (FrameworkKnobs::grad_accumulation_pass):
/// lp.grad.to(fp32) reads 2 and writes 4, hp_grad.add_ reads 4 + 4 and writes 4.
constexpr double kGradAccumulationPassBytes = 18.0;

/// Seconds of that pass on pipeline chunk `chunk` for one micro-batch (its parameters on this GPU,
/// at the profile's element-wise bandwidth); 0 when the knob is off.
double grad_accumulation_pass_s(const Problem& p, const ParallelConfig& cfg, int chunk);

}  // namespace meshplan
