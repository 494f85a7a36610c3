// Element-wise HBM traffic of torchtitan's attention inputs: the rotary embedding run as an fp32
// complex multiply and repeat_kv's copies of K and V up to the query heads, per layer and micro-batch.
#pragma once
#include "core/model_spec.h"
#include "costmodel/eager_elementwise.h"

namespace meshplan {

/// Bytes (reads + writes) one layer moves on one GPU, forward and backward, in the code torchtitan's
/// Llama attention runs before SDPA (pytorch/torchtitan torchtitan/models/llama/model.py at
/// 9dec370ad26b5f8e9a7333a0e36165018262644b): apply_rotary_emb upcasts q and k to fp32
/// (`xq.float()`: read e, write 4 per element), multiplies them as complex64 by freqs_cis (read 4,
/// write 4; freqs_cis is (s, d/2), negligible) and casts back (`type_as`: read 4, write e), 16 + 2e
/// bytes per element of q (T h / t) and k (T kv / t); autograd's backward of the three ops moves the
/// same. torch.compile does not change it: inductor has no complex code generation, so the multiply
/// stays an ATen kernel whose fp32 input and output are materialized (torchtitan issue #15).
/// repeat_kv (GQA, n_rep = h / kv > 1): `unsqueeze/expand/reshape` copies K and V to the query heads'
/// width, read e T kv / t, write e T h / t each; its backward sums the gradient back, the same bytes.
///   forward = backward = (16 + 2e) T (h + kv) / t + [kv < h] 2 e T (h + kv) / t
/// Llama 3 8B, b 2, s 8192, bf16, tp 1: 20 * 16384 * 5120 + 4 * 16384 * 5120 = 2.01 GB each way.
EagerBytes torchtitan_attention_input_bytes(const ModelSpec& m, double b, double s, int tp, double element_bytes);

}  // namespace meshplan
