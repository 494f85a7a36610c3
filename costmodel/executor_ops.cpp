// Element-wise traffic of meshplan's executor (costmodel/executor_ops.h).
#include "costmodel/executor_ops.h"

namespace meshplan {

EagerBytes executor_op_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, bool bf16_attention_copies) {
  const double t = static_cast<double>(tp), T = b * s;
  const double C = static_cast<double>(m.hidden_size) / (sp ? t : 1.0);
  const double Q = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim()) / t;
  const double K = static_cast<double>(m.num_kv_heads) * static_cast<double>(m.head_dim()) / t;
  const double F = static_cast<double>(m.intermediate_size) / t;
  const double swiglu_forward = m.mlp == MlpKind::Gated ? 12.0 : 8.0;  // plain: read x, write act
  const double swiglu_backward = m.mlp == MlpKind::Gated ? 20.0 : 12.0;
  EagerBytes out;
  out.forward = T * (40.0 * C + 8.0 * (Q + K) + swiglu_forward * F);
  out.backward = T * (32.0 * C + 8.0 * (Q + K) + swiglu_backward * F);
  if (bf16_attention_copies) {
    out.forward += T * (12.0 * Q + 12.0 * K);
    out.backward += T * (24.0 * Q + 24.0 * K);
  }
  return out;
}

}  // namespace meshplan
