// Megatron-Core's eager element-wise passes for GPT-OSS-style layers (costmodel/megatron_eager_ops.h).
#include "costmodel/megatron_eager_ops.h"

#include "costmodel/ac_policy.h"
#include "costmodel/activations.h"
#include "costmodel/context_parallel.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

namespace {
double d(int64_t v) { return static_cast<double>(v); }
}  // namespace

EagerBytes megatron_eager_op_bytes(const Problem& p, const ParallelConfig& cfg) {
  EagerBytes out;
  const ModelSpec& m = p.model;
  if (!p.job.knobs.megatron_core_model_code) return out;
  const double e = activation_element_bytes(p.job.dtype);
  if (m.moe.enabled() && !p.job.knobs.fused_grouped_mlp) {
    const double rows = moe_load_factor(p.job) * d(m.moe.experts_per_token) * moe_local_tokens(p, cfg) * cfg.etp;
    const double f = d(m.moe.expert_intermediate_size) / cfg.etp, h = d(m.hidden_size);
    const double r = moe_layer_fraction(m);
    const bool clamp = m.glu_clamp > 0.0 && m.mlp == MlpKind::Gated;
    out.forward += r * rows * e * ((clamp ? 8.0 * f : 0.0) + (m.expert_bias ? 6.0 * h : 0.0));
    out.backward += r * rows * e * ((clamp ? 10.0 * f : 0.0) + (m.expert_bias ? 6.0 * h : 0.0));
  }
  if (m.rope_yarn_factor > 1.0 && !p.job.knobs.yarn_rope_fused) {
    // Rotated elements per token: every query and KV head's head_dim; MLA rotates only the
    // qk_rope_head_dim part of each query head and one shared key head of that width.
    const double rotated = m.mla.enabled() ? d(m.mla.qk_rope_head_dim) * d(m.num_heads + 1)
                                           : d(m.head_dim()) * d(m.num_heads + m.num_kv_heads);
    const double q = d(cfg.micro_batch_size) * cp_local_seq(p, cfg) * rotated / cfg.tp;
    out.forward += 10.0 * q * e;
    out.backward += 10.0 * q * e;
  }
  return out;
}

void add_megatron_eager_ops(const Problem& p, const ParallelConfig& cfg, LayerCompute& c) {
  const EagerBytes b = megatron_eager_op_bytes(p, cfg);
  if (b.forward <= 0.0 && b.backward <= 0.0) return;
  const double fwd = memory_bound_time_s(p.hardware, b.forward);
  c.forward_s += fwd;
  c.backward_input_s += memory_bound_time_s(p.hardware, b.backward);
  c.recompute_s += recomputed_layer_share(p.job.ac_policy, cfg.recompute) * fwd;
}

}  // namespace meshplan
