// FP8 linear-layer peak, cast/transpose bytes, and FP8 weight copies and scaling state.
#include "costmodel/fp8.h"

#include <algorithm>

#include "costmodel/activations.h"
#include "costmodel/context_parallel.h"
#include "costmodel/mlp_gemm_elements.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

namespace {
// The FP8 peak, or 0 where no FP8 GEMM rate applies (no recipe, torchao row-wise: costed against
// bf16 from its measured speedups, costmodel/fp8_rowwise.h; a profile without an fp8 peak).
double fp8_peak(const Problem& p) {
  if (p.job.fp8 == Fp8Recipe::None || p.job.fp8 == Fp8Recipe::Rowwise) return 0.0;
  return p.hardware.peak_flops_for("fp8");
}
}  // namespace

double linear_gemm_peak(const Problem& p, double dense_peak) {
  const double fp8 = fp8_peak(p);
  if (!(fp8 > 0.0)) return dense_peak;
  const bool split_forward = p.job.fp8 == Fp8Recipe::Blockwise || p.job.fp8 == Fp8Recipe::Mxfp8;
  return split_forward ? fp8 * p.hardware.fp8_gemm_relative_efficiency : fp8;
}

double linear_gemm_backward_peak(const Problem& p, double dense_peak) {
  const double fp8 = fp8_peak(p);
  return fp8 > 0.0 ? fp8 * p.hardware.fp8_gemm_relative_efficiency : dense_peak;
}

bool fp8_gemm_needs_transposes(const HardwareProfile& hw) {
  const double cc = hw.compute_capability;
  if (!(cc > 0.0)) return true;
  return !((cc >= 10.0 && cc < 12.0) || cc >= 13.0);
}

Fp8Overhead fp8_cast_bytes(const Problem& p, const ParallelConfig& cfg, double tokens) {
  Fp8Overhead o;
  // Row-wise casts are inside its measured speedups (costmodel/fp8_rowwise.h).
  if (p.job.fp8 == Fp8Recipe::None || p.job.fp8 == Fp8Recipe::Rowwise) return o;
  const double t = static_cast<double>(cfg.tp);
  const double h = static_cast<double>(p.model.hidden_size);
  const double q = static_cast<double>(p.model.q_dim());  // attention output width (h unless head_dim is set)
  const double kv = static_cast<double>(p.model.kv_dim());
  // Input elements of the four GEMMs (column-parallel inputs replicated, row-parallel split by t)
  // and output-gradient elements (the GEMM outputs); the MLP's (dense or MoE experts) from
  // costmodel/mlp_gemm_elements.h.
  const GemmElements mlp = mlp_gemm_elements(p, cfg, tokens);
  const double inputs = tokens * (h + q / t) + mlp.inputs;
  const double outputs = tokens * ((q + 2.0 * kv) / t + h) + mlp.outputs;
  const bool blocked = p.job.fp8 == Fp8Recipe::Blockwise || p.job.fp8 == Fp8Recipe::Mxfp8;
  const double cast = p.job.fp8 == Fp8Recipe::Current ? 5.0 : 3.0;
  o.forward_bytes = cast * inputs;
  const double transposes = fp8_gemm_needs_transposes(p.hardware) ? 2.0 * (inputs + outputs) : 0.0;
  o.backward_bytes = blocked ? 4.0 * outputs + 2.0 * inputs   // row+col quantize of grads; col copy of inputs
                             : cast * outputs + transposes;   // cast + FP8 transposes (TN-only GPUs)
  return o;
}

double fp8_weight_bytes_per_param(Fp8Recipe r, bool transposes) {
  switch (r) {
    case Fp8Recipe::None: return 0.0;
    case Fp8Recipe::Delayed:
    case Fp8Recipe::Current: return transposes ? 2.0 : 1.0;
    case Fp8Recipe::Blockwise: return 2.0 + 2.0 * 4.0 / 16384.0;
    case Fp8Recipe::Mxfp8: return 2.0 + 2.0 / 32.0;
    case Fp8Recipe::Rowwise: return 0.0;  // torchao casts the 16-bit weights at every use, keeps no copy
  }
  return 0.0;
}

double fp8_stashed_input_bytes(const Problem& p) {
  const Fp8Recipe recipe = p.job.fp8;
  if (recipe == Fp8Recipe::None || recipe == Fp8Recipe::Rowwise || !p.job.knobs.fp8_saves_quantized_inputs)
    return activation_element_bytes(p.job.dtype);
  return 1.0 + (recipe == Fp8Recipe::Mxfp8 ? 1.0 / 32.0 : recipe == Fp8Recipe::Blockwise ? 4.0 / 128.0 : 0.0);
}

double fp8_stash_delta_bytes(const Problem& p, const ParallelConfig& cfg, Recompute r) {
  const Fp8Recipe recipe = p.job.fp8;
  if (recipe == Fp8Recipe::None || recipe == Fp8Recipe::Rowwise || !p.job.knobs.fp8_saves_quantized_inputs ||
      r == Recompute::Full)
    return 0.0;
  const double q = fp8_stashed_input_bytes(p);
  const double e = activation_element_bytes(p.job.dtype);
  const double t = static_cast<double>(cfg.tp);
  const double n = cfg.sequence_parallel ? t : 1.0;
  const double T = static_cast<double>(cfg.micro_batch_size) * cp_local_seq(p, cfg);  // tokens on this GPU
  const double h = static_cast<double>(p.model.hidden_size);
  const double f = static_cast<double>(p.model.intermediate_size);
  // MoE layers have experts (their stash is moe_cost.h's, left 16-bit) in place of the dense MLP:
  // its two terms count for the dense share of the layers only.
  const double dense_mlp = p.model.moe.enabled() ? 1.0 - moe_layer_fraction(p.model) : 1.0;
  // The out-projection's input, the attention output, is heads x head_dim wide.
  const double a = static_cast<double>(p.model.q_dim());
  return (q - e) * T * h / n + q * T * a / t + dense_mlp * ((q - e) * T * h / n + (q - e) * T * f / t);
}

double fp8_scaling_state_bytes_per_layer(Fp8Recipe r) {
  if (r == Fp8Recipe::None || r == Fp8Recipe::Rowwise) return 0.0;  // dynamic scales, none kept
  const double tensors = 4.0 * 5.0;  // 4 modules x (3 forward + 2 backward) FP8 tensors
  const double history = r == Fp8Recipe::Delayed ? kFp8AmaxHistoryLen : 1.0;
  return tensors * 4.0 * (history + 2.0);  // fp32 amax history (or current amax), scale, scale_inv
}

}  // namespace meshplan
