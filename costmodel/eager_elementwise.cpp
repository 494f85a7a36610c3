// Eager model code's extra element-wise traffic around attention (costmodel/eager_elementwise.h).
#include "costmodel/eager_elementwise.h"

namespace meshplan {

EagerBytes unpad_attention_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  const double T = b * s, t = static_cast<double>(tp);
  const double h = static_cast<double>(m.hidden_size), kv = static_cast<double>(m.kv_dim());
  EagerBytes out;
  out.forward = (2.0 * e * T * (h + 2.0 * kv) + 3.0 * e * T * h) / t;
  out.backward = (3.0 * e * T * (h + 2.0 * kv) + 2.0 * e * T * h) / t;
  return out;
}

}  // namespace meshplan
