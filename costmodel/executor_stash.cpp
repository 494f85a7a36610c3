// Activation and copy bytes the executor saves with its bf16 stash (formulas in executor_stash.h).
#include "costmodel/executor_stash.h"

#include "costmodel/moe_layout.h"

namespace meshplan {

double executor_bf16_stash_saving_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, double e) {
  if (e <= 2.0) return 0.0;
  const double t = static_cast<double>(tp), T = b * s;
  const double h = static_cast<double>(m.hidden_size), f = static_cast<double>(m.intermediate_size);
  const double r = sp && tp > 1 ? t : 1.0;
  const double dense_share = 1.0 - moe_layer_fraction(m);
  return (e - 2.0) * (T * h / r + dense_share * (T * h / r + T * f / t));
}

double executor_bf16_attention_saving_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  if (e <= 2.0) return 0.0;
  const double t = static_cast<double>(tp), T = b * s, D = static_cast<double>(m.head_dim());
  const double Q = static_cast<double>(m.num_heads) * D / t, K = static_cast<double>(m.num_kv_heads) * D / t;
  return (e - 2.0) * T * (2.0 * Q + 2.0 * K);
}

EagerBytes executor_fused_bf16_saving_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, bool gemm_stash,
                                            bool attention_stash) {
  const double t = static_cast<double>(tp), T = b * s, D = static_cast<double>(m.head_dim());
  const double C = static_cast<double>(m.hidden_size), F = static_cast<double>(m.intermediate_size) / t;
  const double Q = static_cast<double>(m.num_heads) * D / t, K = static_cast<double>(m.num_kv_heads) * D / t;
  EagerBytes saved;
  if (gemm_stash) saved.forward += 8.0 * T * ((sp && tp > 1 ? 0.0 : 2.0 * C) + F);
  if (attention_stash) saved.forward += 8.0 * T * (Q + K);
  return saved;
}

}  // namespace meshplan
