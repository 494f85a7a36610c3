// FLOP counts as the publishers of validation runs count them (costmodel/paper_flops.h).
#include "costmodel/paper_flops.h"

#include "costmodel/flops.h"

namespace meshplan {

// Narayanan et al. 2021, eq. 3: FLOPs per iteration with full recomputation counted.
static double megatron_formula_flops(const ModelSpec& m, double B, double s) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
  const double V = static_cast<double>(m.vocab_size);
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

// MosaicML llm-foundry's MFU numerator (scripts/train/benchmarking/README.md "MFU and HFU"):
// (6 N s + 12 l h s^2) per sequence, N = all parameters.
static double mosaic_formula_flops(const ModelSpec& m, double B, double s) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
  return B * (6.0 * m.num_parameters() * s + 12.0 * l * h * s * s);
}

// Megatron-Core's num_floating_point_operations (megatron/training/training.py, core_r0.8.0):
// 12 B s l h^2 ((1 + g/a + s/h)(a d_head / h) + (f/h)(3/2 if gated) + V/(2 l h)).
static double megatron_core_formula_flops(const ModelSpec& m, double B, double s) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
  const double a = static_cast<double>(m.num_heads), g = static_cast<double>(m.num_kv_heads);
  const double f = static_cast<double>(m.intermediate_size), V = static_cast<double>(m.vocab_size);
  const double attn = (1.0 + g / a + s / h) * (a * static_cast<double>(m.head_dim()) / h);
  const double mlp = (f / h) * (m.mlp == MlpKind::Gated ? 1.5 : 1.0);
  return 12.0 * B * s * l * h * h * (attn + mlp + V / (2.0 * l * h));
}

// PaLM's MFU count (Chowdhery et al. 2023, App. B): (6 N + 12 l h s) per token, N = all parameters.
static double palm_formula_flops(const ModelSpec& m, double B, double s) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
  return B * s * (6.0 * m.num_parameters() + 12.0 * l * h * s);
}

// torchtitan's (train.py, 3faaa1a0d): (6 N s + 12 l h s^2) per sequence, N without the token embedding.
static double torchtitan_formula_flops(const ModelSpec& m, double B, double s) {
  const double l = static_cast<double>(m.num_layers), h = static_cast<double>(m.hidden_size);
  const double n = m.num_parameters() - static_cast<double>(m.vocab_size) * h;
  return B * (6.0 * n * s + 12.0 * l * h * s * s);
}

// Megatron-LM's num_floating_point_operations at d48bd6be (megatron/training/training.py l.826-1168,
// transformer path; the same values since core_v0.13.0, validation/megatron-lm-moe-recipes.md sec. 4): per
// token fb fma = 6 x [h (f_dense x n_dense + f_moe k x n_moe + f_shared x n_moe) (x3 gated) + attention
// projections x (L + mtp) + mtp (3h + 2h^2) + h V (mtp + 1)] plus, per token and per token of context,
// the attention core halved for the causal mask, 6 q / 2 x 2 (MLA: 6 (a (qk + r) / 2 + a v / 2)) x (L + mtp).
// Each MTP module counts as one more layer of the last layer's kind. Not counted: the router, norms (but
// MTP's 3h and MLA's +1), element-wise work, recomputation. V is taken unpadded (Megatron pads it to a
// multiple of 128 x TP: 151936 -> 152064 at TP 2, +0.001 % of the FLOPs).
double megatron_core_moe_formula_flops(const ModelSpec& m, double B, double s) {
  const double T = B * s, h = static_cast<double>(m.hidden_size), V = static_cast<double>(m.vocab_size);
  const double mtp = static_cast<double>(m.mtp_layers);
  const double L = static_cast<double>(m.num_layers);
  const bool last_moe = m.moe.enabled() && m.moe.is_moe_layer(m.num_layers - 1);
  const double n_moe = static_cast<double>(m.num_moe_layers()) + (last_moe ? mtp : 0.0);
  const double n_dense = L - static_cast<double>(m.num_moe_layers()) + (last_moe ? 0.0 : mtp);
  const double x = m.mlp == MlpKind::Gated ? 3.0 : 2.0;
  const double k = static_cast<double>(m.moe.experts_per_token);
  const double f_moe = static_cast<double>(m.moe.expert_intermediate_size);
  const double f_shared = static_cast<double>(m.moe.num_shared_experts) *
                          static_cast<double>(m.moe.shared_expert_intermediate_size);
  const double mlp = h * x * (static_cast<double>(m.intermediate_size) * n_dense + (f_moe * k + f_shared) * n_moe);
  double linear = 0, core = 0;  // attention per layer: per token, and per token per context token
  if (m.mla.enabled()) {
    const MlaSpec& a_ = m.mla;
    const double a = static_cast<double>(m.num_heads), qk = static_cast<double>(a_.qk_nope_head_dim);
    const double r = static_cast<double>(a_.qk_rope_head_dim), v = static_cast<double>(a_.v_head_dim);
    const double q_lora = static_cast<double>(a_.q_lora_rank), kv_lora = static_cast<double>(a_.kv_lora_rank);
    const double q_term = a_.q_lora_rank > 0 ? q_lora * (h + a * (qk + r) + 1.0) : h * a * (qk + r);
    linear = q_term + kv_lora * (h + a * (qk + v) + 1.0) + h * r + a * v * h;
    core = a * (qk + r) / 2.0 + a * v / 2.0;
  } else {
    const double q = static_cast<double>(m.q_dim()), kv = static_cast<double>(m.kv_dim());
    linear = h * (q + 2.0 * kv) + q * h;
    core = q;  // q / 2 (causal) x 2 (scores and values)
  }
  const double per_token = 6.0 * (mlp + linear * (L + mtp) + mtp * (3.0 * h + 2.0 * h * h) + h * V * (mtp + 1.0));
  return T * per_token + 6.0 * B * s * s * core * (L + mtp);
}

double paper_flops(const std::string& formula, const ModelSpec& m, double B, double s) {
  if (formula == "megatron-core-moe") return megatron_core_moe_formula_flops(m, B, s);
  if (formula == "megatron") return megatron_formula_flops(m, B, s);
  if (formula == "megatron-core") return megatron_core_formula_flops(m, B, s);
  if (formula == "mosaic") return mosaic_formula_flops(m, B, s);
  if (formula == "palm") return palm_formula_flops(m, B, s);
  if (formula == "torchtitan") return torchtitan_formula_flops(m, B, s);
  return step_flops(m, B, s, Recompute::None).model;
}


}  // namespace meshplan
