// fms's rotary embedding and GQA K/V expansion bytes (costmodel/fms_llama_ops.h).
#include "costmodel/fms_llama_ops.h"

namespace meshplan {

EagerBytes fms_attention_input_bytes(const ModelSpec& m, double b, double s, int tp, double e) {
  return rope_and_kv_expand_bytes(m, b, s, tp, e, 32.0 + 4.0 * e);  // upcast, pair multiply, sum, downcast, copy
}

}  // namespace meshplan
