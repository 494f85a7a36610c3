// MLA attention's stash, what mla_up_proj recompute discards, and its FLOPs (costmodel/mla_stash.h).
#include "costmodel/mla_stash.h"

namespace meshplan {

namespace {
double d(int64_t v) { return static_cast<double>(v); }
double local_heads(const ModelSpec& m, int tp) { return d(m.num_heads) / static_cast<double>(tp); }
double qk_head(const ModelSpec& m) { return d(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim); }
}  // namespace

MlaStashElements mla_stash_elements(const ModelSpec& m, int tp) {
  MlaStashElements out;
  if (!m.mla.enabled()) return out;
  const double v = d(m.mla.v_head_dim);
  out.split = local_heads(m, tp) * (2.0 * qk_head(m) + 2.0 * v);
  out.unsplit = 2.0 * (d(m.mla.q_lora_rank) + d(m.mla.kv_lora_rank));
  return out;
}

double mla_up_proj_discarded_elements(const ModelSpec& m, int tp) {
  if (!m.mla.enabled()) return 0.0;
  return local_heads(m, tp) * (2.0 * qk_head(m) + d(m.mla.v_head_dim)) + d(m.mla.q_lora_rank) +
         d(m.mla.kv_lora_rank);
}

double mla_up_proj_flops(const ModelSpec& m, double tokens, int tp) {
  if (!m.mla.enabled()) return 0.0;
  const double a = local_heads(m, tp);
  return 2.0 * tokens * d(m.mla.q_lora_rank) * a * qk_head(m) +
         2.0 * tokens * d(m.mla.kv_lora_rank) * a * d(m.mla.qk_nope_head_dim + m.mla.v_head_dim);
}

}  // namespace meshplan
