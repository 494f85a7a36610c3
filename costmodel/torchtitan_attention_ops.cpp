// torchtitan's rotary embedding and repeat_kv bytes (costmodel/torchtitan_attention_ops.h).
#include "costmodel/torchtitan_attention_ops.h"

namespace meshplan {

EagerBytes torchtitan_attention_input_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  const double t = static_cast<double>(tp);
  const double T = b * s;
  const double h = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim());
  const double kv = static_cast<double>(m.kv_dim());
  const double qk_elements = T * (h + kv) / t;
  double bytes = (16.0 + 2.0 * e) * qk_elements;           // upcast, complex multiply, downcast
  if (kv < h) bytes += 2.0 * e * T * (h + kv) / t;          // K and V repeated to the query heads
  return EagerBytes{bytes, bytes};
}

}  // namespace meshplan
