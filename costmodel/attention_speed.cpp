// Published fused-attention speed curves: selection by kernel and head dimension, interpolation in sequence length.
#include "costmodel/attention_speed.h"

#include <algorithm>
#include <cmath>

#include "costmodel/log_interp.h"

namespace meshplan {

namespace {
const AttentionKernelSpeed* closest(const HardwareProfile& hw, const char* kernel, double head_dim) {
  const AttentionKernelSpeed* best = nullptr;
  double best_distance = 0.0;
  for (const AttentionKernelSpeed& c : hw.attention_kernel_speeds) {
    if (c.kernel != kernel || c.seq.empty()) continue;
    const double d = std::fabs(std::log(static_cast<double>(c.head_dim) / std::max(1.0, head_dim)));
    if (!best || d < best_distance || (d == best_distance && c.head_dim > best->head_dim)) {
      best = &c;
      best_distance = d;
    }
  }
  return best;
}
}  // namespace

const AttentionKernelSpeed* attention_speed_curve(const HardwareProfile& hw, FusedAttentionKernel kernel,
                                                  double head_dim) {
  // flash_attn_triton.py has no published curve of its own (core/framework_knobs.h); its tiles do not
  // shrink with the head dimension, so above 64 it keeps FA1's head-dim-64 rate (header comment).
  if (kernel == FusedAttentionKernel::Triton)
    return closest(hw, to_string(FusedAttentionKernel::FlashAttention1),
                   std::min(head_dim, kTritonTileHeadDim));
  if (const AttentionKernelSpeed* c = closest(hw, to_string(kernel), head_dim)) return c;
  if (kernel == FusedAttentionKernel::TritonOps)
    return closest(hw, to_string(FusedAttentionKernel::FlashAttention1), head_dim);
  return nullptr;
}

double curve_flops_per_s(const AttentionKernelSpeed& c, double seq) {
  return log_interpolate(c.seq, c.flops_per_s, seq);
}

double forward_time_share(const HardwareProfile& hw, FusedAttentionKernel kernel) {
  double ef = 0.0, eb = 0.0;
  if (kernel == FusedAttentionKernel::FlashAttention2) {
    ef = hw.fused_attention_forward_efficiency;
    eb = hw.fused_attention_backward_efficiency;
  } else if (kernel == FusedAttentionKernel::Cudnn) {
    ef = hw.cudnn_attention_forward_efficiency;
    eb = hw.cudnn_attention_backward_efficiency;
  }
  if (!(ef > 0.0 && eb > 0.0)) return 1.0 / 3.5;
  return (1.0 / ef) / (1.0 / ef + 2.5 / eb);
}

}  // namespace meshplan
