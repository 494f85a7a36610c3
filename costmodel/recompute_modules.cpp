// Stash savings, recompute time, working set and FLOPs of Megatron-Core's recompute modules
// (costmodel/recompute_modules.h).
#include "costmodel/recompute_modules.h"

#include <algorithm>

#include "core/recompute_modules.h"
#include "costmodel/ac_policy.h"
#include "costmodel/activations.h"
#include "costmodel/attention.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/flops.h"
#include "costmodel/fp8.h"
#include "costmodel/mla_stash.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

namespace {
double d(int64_t v) { return static_cast<double>(v); }

struct Shape {
  double T = 0, e = 0, q = 0, t = 1, n = 1, h = 0, f = 0, g = 1, r = 0, b = 0, s = 0;
};

Shape shape(const Problem& p, const ParallelConfig& cfg) {
  Shape x;
  x.b = d(cfg.micro_batch_size);
  x.s = cp_local_seq(p, cfg);
  x.T = x.b * x.s;
  x.e = activation_element_bytes(p.job.dtype);
  x.q = fp8_stashed_input_bytes(p);
  x.t = static_cast<double>(cfg.tp);
  x.n = cfg.sequence_parallel ? x.t : 1.0;
  x.h = d(p.model.hidden_size);
  x.f = d(p.model.intermediate_size);
  x.g = p.model.mlp == MlpKind::Gated ? 2.0 : 1.0;
  x.r = p.model.moe.enabled() ? moe_layer_fraction(p.model) : 0.0;
  return x;
}

// Norms that are modules of their own under Megatron-Core's TE spec (gpt_layer_specs.py): MLA's
// input_layernorm (the dense attention's is fused into linear_qkv) and the MoE layers' pre_mlp_layernorm
// (the dense MLP's is fused into linear_fc1); per mean layer.
double standalone_norms(const Problem& p, const Shape& x) { return (p.model.mla.enabled() ? 1.0 : 0.0) + x.r; }

double one_dense_mlp_bytes(const Shape& x) { return x.T * (x.q * x.h / x.n + (x.g * x.e + x.q) * x.f / x.t); }
}  // namespace

uint32_t active_recompute_modules(const Problem& p, const ParallelConfig& cfg) {
  if (cfg.recompute != Recompute::Selective || p.job.ac_policy.kind != AcPolicyKind::Megatron) return 0;
  return p.job.knobs.recompute_modules;
}

double recompute_modules_dense_saving_bytes(const Problem& p, const ParallelConfig& cfg) {
  const uint32_t m = active_recompute_modules(p, cfg);
  const Shape x = shape(p, cfg);
  double bytes = 0.0;
  if (m & kRecomputeCoreAttn) bytes += attention_core_stash_bytes(p.model, p.job.knobs.attention, x.b, x.s, x.e) / x.t;
  if (m & kRecomputeLayernorm) {
    if (p.model.mla.enabled()) bytes += x.q * x.T * x.h / x.n;  // kept by the down-projections (FP8: quantized)
    bytes += x.r * x.e * x.T * x.h / x.n;
  }
  if (m & kRecomputeMlaUpProj) bytes += x.e * x.T * mla_up_proj_discarded_elements(p.model, cfg.tp);
  if (m & kRecomputeMlp) bytes += (1.0 - x.r) * one_dense_mlp_bytes(x);
  return bytes;
}

double recompute_modules_dense_s(const Problem& p, const ParallelConfig& cfg, const LayerForwardParts& f) {
  const uint32_t m = active_recompute_modules(p, cfg);
  const Shape x = shape(p, cfg);
  const HardwareProfile& hw = p.hardware;
  double seconds = 0.0;
  if (m & kRecomputeCoreAttn) seconds += f.attention_core_s;
  if (m & kRecomputeLayernorm) seconds += standalone_norms(p, x) * memory_bound_time_s(hw, 2.0 * x.e * x.T * x.h / x.n);
  if ((m & kRecomputeMlaUpProj) && p.model.mla.enabled()) {
    const double qkv = d(p.model.num_heads) / x.t *
                       (2.0 * d(p.model.mla.qk_nope_head_dim + p.model.mla.qk_rope_head_dim) + d(p.model.mla.v_head_dim));
    seconds += gemm_time_s(hw, f.linear_peak, mla_up_proj_flops(p.model, x.T, cfg.tp)) +
               memory_bound_time_s(hw, 2.0 * x.e * x.T * qkv);
  }
  if ((m & kRecomputeMlp) && x.r < 1.0)
    seconds += (1.0 - x.r) * (gemm_time_s(hw, f.linear_peak, x.g * 2.0 * x.T * x.h * x.f / x.t) +
                              gemm_time_s(hw, f.linear_peak, 2.0 * x.T * x.f * x.h / x.t) +
                              memory_bound_time_s(hw, (x.g + 1.0) * x.e * x.T * x.f / x.t));
  return seconds;
}

double recompute_modules_working_bytes(const Problem& p, const ParallelConfig& cfg) {
  const uint32_t m = active_recompute_modules(p, cfg);
  const Shape x = shape(p, cfg);
  double bytes = 0.0;
  if (m & kRecomputeCoreAttn)
    bytes = std::max(bytes, attention_core_stash_bytes(p.model, p.job.knobs.attention, x.b, x.s, x.e) / x.t);
  if (m & kRecomputeMlaUpProj) bytes = std::max(bytes, x.e * x.T * mla_up_proj_discarded_elements(p.model, cfg.tp));
  if ((m & kRecomputeMlp) && x.r < 1.0) bytes = std::max(bytes, one_dense_mlp_bytes(x));
  return bytes;
}

double recompute_modules_flops(const Problem& p, uint32_t m, double sequences, double seq) {
  const ModelSpec& model = p.model;
  const LayerFlops layer = layer_forward_flops(model, sequences, seq);
  const double T = sequences * seq;
  const double r = model.moe.enabled() ? moe_layer_fraction(model) : 0.0;
  const double h = d(model.hidden_size), f = d(model.intermediate_size);
  const double g = model.mlp == MlpKind::Gated ? 2.0 : 1.0;
  double flops = 0.0;
  if (m & kRecomputeCoreAttn) flops += layer.attention_core();
  if (m & kRecomputeMlaUpProj) flops += mla_up_proj_flops(model, T, 1);
  if (m & kRecomputeMlp) flops += (1.0 - r) * (g + 1.0) * 2.0 * T * h * f;
  if (m & kRecomputeMoe) flops += layer.expert_up + layer.expert_down + layer.router;
  if ((m & kRecomputeSharedExperts) || (m & kRecomputeMoe)) {
    const double fs = d(model.moe.num_shared_experts) * d(model.moe.shared_expert_intermediate_size);
    flops += r * (g + 1.0) * 2.0 * T * h * fs;
  }
  return flops;
}

}  // namespace meshplan
