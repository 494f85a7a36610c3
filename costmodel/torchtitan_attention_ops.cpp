// torchtitan's rotary embedding and repeat_kv bytes (costmodel/torchtitan_attention_ops.h).
#include "costmodel/torchtitan_attention_ops.h"

namespace meshplan {

EagerBytes torchtitan_attention_input_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  return rope_and_kv_expand_bytes(m, b, s, tp, e, 16.0 + 2.0 * e);  // upcast, complex multiply, downcast
}

}  // namespace meshplan
