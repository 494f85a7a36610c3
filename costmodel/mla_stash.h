// Stashed activations of multi-head latent attention (DeepSeek-V2/V3) as Megatron-Core's MLASelfAttention keeps them.
#pragma once
#include "core/model_spec.h"

namespace meshplan {

/// Elements per token that one MLA layer's attention keeps for the backward, on one GPU, beyond
/// activations.h's replicated part (norm input, down-projection input, MLP input):
///  - `split` (column-parallel, divided by TP t): the core attention's inputs Q and K, a/t heads of
///    qk_nope + qk_rope each (RoPE'd and concatenated; TE's fused attention saves them), V (a/t x v)
///    and its output (a/t x v, the out-projection's input): (a/t)(2(nope + rope) + 2v);
///  - `unsplit` (neither TP- nor sequence-parallel-split: the compressed tensors are gathered over the
///    sequence before the up-projections, multi_latent_attention.py get_query_key_value_tensors): the
///    Q and KV up-projections are TE LayerNormLinear modules with the q/kv layernorm fused in, each
///    keeping its input and its normalized output, 2(q_lora + kv_lora) (q_lora 0: Q is projected from
///    the hidden state directly, nothing kept for it).
/// For DeepSeek-V3 (a 128, nope 128, rope 64, v 128, q_lora 1536, kv_lora 512) at t = 1: 81,920 + 4,096,
/// where an MHA layer of the same width keeps 2h + 2kv = 28,672.
struct MlaStashElements {
  double split = 0;
  double unsplit = 0;
};
MlaStashElements mla_stash_elements(const ModelSpec& m, int tp);

/// What Megatron-Core's mla_up_proj recompute discards (CheckpointWithoutOutput around the up-projections
/// and RoPE): Q, K and V, (a/t)(2(nope + rope) + v), and the fused layernorms' outputs q_lora + kv_lora;
/// the compressed inputs stay. Elements per token.
double mla_up_proj_discarded_elements(const ModelSpec& m, int tp);

/// Forward FLOPs of the up-projections for T tokens on one GPU: 2 T q_lora (a/t)(nope + rope)
/// + 2 T kv_lora (a/t)(nope + v).
double mla_up_proj_flops(const ModelSpec& m, double tokens, int tp);

}  // namespace meshplan
