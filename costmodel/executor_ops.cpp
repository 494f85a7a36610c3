// Element-wise traffic of meshplan's executor (costmodel/executor_ops.h).
#include "costmodel/executor_ops.h"

namespace meshplan {

EagerBytes executor_op_bytes(const ModelSpec& m, double b, double s, int tp, bool sp, bool bf16_attention_copies,
                             bool bf16_attention_stash) {
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
    out.forward += T * (bf16_attention_stash ? 6.0 * Q + 12.0 * K : 12.0 * Q + 12.0 * K);
    out.backward += T * (bf16_attention_stash ? 12.0 * Q + 12.0 * K : 24.0 * Q + 24.0 * K);
  }
  return out;
}

namespace {
constexpr double kCopyBytesPerElement = 6.0;  // read fp32 (4), write bf16 (2)
}  // namespace

EagerBytes executor_gemm_copy_bytes(const ModelSpec& m, double b, double s, int tp, bool bf16_stash, bool sp,
                                    bool bf16_attention_stash) {
  const double t = static_cast<double>(tp), T = b * s;
  const double C = static_cast<double>(m.hidden_size);
  const double Q = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim()) / t;
  const double K = static_cast<double>(m.num_kv_heads) * static_cast<double>(m.head_dim()) / t;
  const double F = static_cast<double>(m.intermediate_size) / t;
  const double mlp_inputs = m.mlp == MlpKind::Gated ? 2.0 : 1.0;  // GEMMs reading h2: gate and up, or up
  const double weights = C * (Q + 2.0 * K) + C * Q + (mlp_inputs + 1.0) * C * F;
  EagerBytes out;
  out.forward = kCopyBytesPerElement * (T * (2.0 * C + Q + F) + weights);
  const double attention_backward = 2.0 * C + 2.0 * Q + 2.0 * K;
  const double mlp_backward = 2.0 * C + (1.0 + mlp_inputs) * F;
  out.backward = kCopyBytesPerElement * (T * (attention_backward + mlp_backward) + weights);
  if (bf16_stash) {
    // act is copied once (its narrowing in forward) and read as it is in backward. Without SP so
    // are h1 and h2; with it, their row shards are narrowed in forward and widened (read 2, write
    // 4: the same 6 bytes) before the backward's all-gather, whose output is copied as before.
    const bool shards = sp && tp > 1;
    out.forward += shards ? kCopyBytesPerElement * T * 2.0 * C / t : 0.0;
    out.backward -= kCopyBytesPerElement * T * (F + (shards ? -2.0 * C / t : 2.0 * C));
  }
  if (bf16_attention_stash) {  // att, wo's input, is bf16 already
    out.forward -= kCopyBytesPerElement * T * Q;
    out.backward -= kCopyBytesPerElement * T * Q;
  }
  return out;
}

EagerBytes executor_head_copy_bytes(const ModelSpec& m, double b, double s, int tp, int64_t loss_chunks) {
  const double T = b * s, k = static_cast<double>(loss_chunks);
  const double C = static_cast<double>(m.hidden_size);
  const double V = static_cast<double>(m.vocab_size) / static_cast<double>(tp);
  const double W = V * C;
  EagerBytes out;
  if (loss_chunks <= 1) {
    out.forward = kCopyBytesPerElement * (T * C + W);
    out.backward = kCopyBytesPerElement * (T * (C + 2.0 * V) + W);
  } else {
    out.forward = kCopyBytesPerElement * (T * k * C + W);
    out.backward = kCopyBytesPerElement * (T * (2.0 * k * C + 2.0 * V) + 2.0 * W);
  }
  return out;
}

}  // namespace meshplan
