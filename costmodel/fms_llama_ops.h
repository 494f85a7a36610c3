// Element-wise HBM traffic of IBM's Foundation Model Stack (fms) Llama code run eager, as fms-fsdp trains it:
// its rotary embedding (an fp32 6-D broadcast multiply and sum) and GQA's K/V expansion, per layer and micro-batch.
#pragma once
#include "core/model_spec.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Bytes (reads + writes) one layer moves on one GPU, forward and backward, in the code fms's attention
/// runs around SDPA (foundation-model-stack/foundation-model-stack at b06c5dfb, 2024-02, the ibm-fms that
/// fms-fsdp's requirements.txt `ibm-fms>=0.0.3` took when its README table was published on 2024-02-21).
/// fms/modules/positions.py RotaryEmbedding.adjusted_qk on q (b, a, s, d) viewed from the projection's
/// (b, s, a, d) output, per element of q (T h / t) and of k (T kv / t), e bytes per 16-bit element:
///   forward  q.float()                               read e, write 4
///            freqs (1,1,s,d/2,2,2) .mul(q_.unsqueeze(-2)): 2 fp32 outputs per element, read 4, write 8
///            .sum(5)                                  read 8, write 4
///            .type_as(q)                              read 4, write e
///            .contiguous()  (the product keeps q's (b, s, a, d) memory order: a copy) read e, write e
///                                                                                  = 32 + 4e
///   backward type_as: grad.to(fp32) e + 4; mul: grad (expanded over the pair axis) * freqs read 4,
///            write 8, summed back to q_'s shape read 8, write 4; float(): 4 + e; view's backward
///            reshapes the (b, a, s, d)-contiguous gradient to the projection's (b, s, a*d): a copy 2e
///                                                                                  = 32 + 4e
/// fms/modules/attention.py MultiHeadAttention (GQA, nheads > kvheads): keys and values
/// `unsqueeze(2).expand(...).flatten(1, 2)` copy K and V to the query heads, read e T kv / t, write
/// e T h / t each; autograd sums the gradient back, the same bytes.
///   forward = backward = (32 + 4e) T (h + kv) / t + [kv < h] 2 e T (h + kv) / t
/// The norms (LayerNormParameterized with use_high_precision_pow=True: x.float(), pow(2), mean, rsqrt,
/// type_as, weight *) and GatedLinearUnit (a(wg(x)) * w1(x)) run the same PyTorch ops as torchtitan's
/// eager RMSNorm and SwiGLU, costed by costmodel/eager_llama_ops.h. SDPA's output needs no copy:
/// PyTorch's flash kernel returns (b, s, a, d) memory, so attn.transpose(2, 1).contiguous() is a view.
/// Llama 2 7B, b 2, s 4096 (T = 8192), bf16, tp 1: 40 * 8192 * 8192 = 2.68 GB each way.
EagerBytes fms_attention_input_bytes(const ModelSpec& m, double b, double s, int tp, double element_bytes);

}  // namespace meshplan
