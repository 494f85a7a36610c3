// Eager model code's extra element-wise traffic around attention (costmodel/eager_elementwise.h).
#include "costmodel/eager_elementwise.h"

namespace meshplan {

EagerBytes unpad_attention_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  const double T = b * s, t = static_cast<double>(tp);
  const double q = static_cast<double>(m.q_dim()), kv = static_cast<double>(m.kv_dim());
  EagerBytes out;
  out.forward = (2.0 * e * T * (q + 2.0 * kv) + 3.0 * e * T * q) / t;
  out.backward = (3.0 * e * T * (q + 2.0 * kv) + 2.0 * e * T * q) / t;
  return out;
}

EagerBytes rope_and_kv_expand_bytes(const ModelSpec& m, double b, double s, int tp, double e,
                                    double rope_bytes_per_element) {
  const double t = static_cast<double>(tp);
  const double T = b * s;
  const double h = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim());
  const double kv = static_cast<double>(m.kv_dim());
  double bytes = rope_bytes_per_element * T * (h + kv) / t;  // q and k through the rotary embedding
  if (kv < h) bytes += 2.0 * e * T * (h + kv) / t;           // K and V repeated to the query heads
  return EagerBytes{bytes, bytes};
}

}  // namespace meshplan
