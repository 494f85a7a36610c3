// fms's rotary embedding and GQA K/V expansion bytes (costmodel/fms_llama_ops.h).
#include "costmodel/fms_llama_ops.h"

namespace meshplan {

EagerBytes fms_attention_input_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  const double t = static_cast<double>(tp);
  const double T = b * s;
  const double h = static_cast<double>(m.num_heads) * static_cast<double>(m.head_dim());
  const double kv = static_cast<double>(m.kv_dim());
  double bytes = (32.0 + 4.0 * e) * T * (h + kv) / t;  // upcast, pair multiply, sum, downcast, copy
  if (kv < h) bytes += 2.0 * e * T * (h + kv) / t;      // K and V expanded to the query heads
  return EagerBytes{bytes, bytes};
}

}  // namespace meshplan
