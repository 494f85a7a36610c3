// Element-wise HBM traffic that eager model code adds around its attention kernel, per layer and micro-batch:
// llm-foundry's unpad/pad of q, k, v and the output, and the rotary embedding + GQA expansion shape shared by
// torchtitan's and fms's code.
#pragma once
#include "core/model_spec.h"

namespace meshplan {

/// Extra bytes one layer moves, forward and backward, on one GPU, when the model code gathers q, k, v
/// into unpadded (nnz, heads, d) tensors before FlashAttention's varlen kernel and scatters the output
/// back: llm-foundry llmfoundry/models/layers/attention.py flash_attn_fn, via flash_attn's
/// bert_padding.unpad_input (index_first_axis: a gather, read + write) and pad_input
/// (index_put_first_axis: zero-fill, then a scatter: read + write). With T = b*s tokens, e bytes per
/// element, q/k/v/output widths h, kv, kv, h split by tp:
///   forward  = 2 e T (h + 2 kv) / t        gathers of q, k, v
///            + 3 e T h / t                 output: zeros, read, write
///   backward = 3 e T (h + 2 kv) / t        scatters of dq, dk, dv (zeros, read, write)
///            + 2 e T h / t                 gather of the output's gradient
/// (MHA, kv = h: 9 e T h forward, 11 e T h backward).
struct EagerBytes {
  double forward = 0;
  double backward = 0;
};
EagerBytes unpad_attention_bytes(const ModelSpec& m, double b, double s, int tp, double element_bytes);

/// Eager rotary embedding and GQA expansion, the shape torchtitan's and fms's attention inputs share: q
/// (T h / t elements) and k (T kv / t) each move `rope_bytes_per_element` (reads + writes, the model code's
/// count), and with kv < h the K and V copies up to the query heads move 2 e T (h + kv) / t; autograd's
/// backward moves the same. costmodel/torchtitan_attention_ops.h and costmodel/fms_llama_ops.h give the counts.
EagerBytes rope_and_kv_expand_bytes(const ModelSpec& m, double b, double s, int tp, double element_bytes,
                                    double rope_bytes_per_element);

}  // namespace meshplan
