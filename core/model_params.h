// Private to core/model_spec.cpp: the parameter-count formulas, written once over a number type
// (double for the cost model, CheckedI64 for the exact count), so both paths share one formula.
#pragma once
#include <cstdint>
#include <optional>

#include "core/checked.h"
#include "core/model_spec.h"

namespace meshplan::model_params {

/// int64 whose + - * record an overflow as "no value" (std::nullopt), never wrap.
struct CheckedI64 {
  std::optional<int64_t> v;
  CheckedI64(int64_t x) : v(x) {}  // NOLINT(google-explicit-constructor): formulas mix in literals
  explicit CheckedI64(std::optional<int64_t> x) : v(x) {}
};
inline CheckedI64 operator+(CheckedI64 a, CheckedI64 b) {
  return CheckedI64(a.v && b.v ? checked_add(*a.v, *b.v) : std::nullopt);
}
inline CheckedI64 operator-(CheckedI64 a, CheckedI64 b) {
  if (!a.v || !b.v) return CheckedI64(std::nullopt);
  int64_t r = 0;
  if (__builtin_sub_overflow(*a.v, *b.v, &r)) return CheckedI64(std::nullopt);
  return CheckedI64(r);
}
inline CheckedI64 operator*(CheckedI64 a, CheckedI64 b) {
  return CheckedI64(a.v && b.v ? checked_mul(*a.v, *b.v) : std::nullopt);
}

template <class N>
N n(int64_t x) { return N(x); }
template <>
inline double n<double>(int64_t x) { return static_cast<double>(x); }

/// Gated MLPs have 3 matrices (gate, up, down), plain ones 2 (up, down).
inline int64_t mlp_matrices(const ModelSpec& m) { return m.mlp == MlpKind::Gated ? 3 : 2; }

/// Norm parameters per norm: gain, plus a bias for LayerNorm-with-bias (GPT-2, Falcon).
inline int64_t per_norm(const ModelSpec& m) { return m.biases || m.norm_bias ? 2 : 1; }

/// One layer's attention. Dense: Q, O are h x (a*d), K, V are h x (g*d) (transformers' LlamaAttention,
/// Gemma with head_dim, Falcon's fused query_key_value has the same a*d + 2*g*d rows).
/// MLA (DeepseekV3Attention): q_a h x q_lora, q_a_layernorm q_lora, q_b q_lora x a*(nope+rope)
/// (or q_proj h x a*(nope+rope) when q_lora_rank is 0); kv_a h x (kv_lora+rope), kv_a_layernorm
/// kv_lora, kv_b kv_lora x a*(nope+v); o a*v x h.
template <class N>
N attention(const ModelSpec& m) {
  const N h = n<N>(m.hidden_size), a = n<N>(m.num_heads);
  if (m.mla.enabled()) {
    const MlaSpec& x = m.mla;
    const N qk_head = n<N>(x.qk_nope_head_dim) + n<N>(x.qk_rope_head_dim);
    const N q_lora = n<N>(x.q_lora_rank), kv_lora = n<N>(x.kv_lora_rank);
    const N q = x.q_lora_rank > 0 ? h * q_lora + q_lora + q_lora * a * qk_head : h * a * qk_head;
    const N kv = h * (kv_lora + n<N>(x.qk_rope_head_dim)) + kv_lora +
                 kv_lora * a * (n<N>(x.qk_nope_head_dim) + n<N>(x.v_head_dim));
    return q + kv + a * n<N>(x.v_head_dim) * h;
  }
  const N q_width = n<N>(m.head_dim()) * a;  // == h unless head_dim is set
  const N kv = n<N>(m.head_dim()) * n<N>(m.num_kv_heads);
  N p = n<N>(2) * h * q_width + n<N>(2) * h * kv;
  if (m.biases || m.qkv_bias) p = p + q_width + n<N>(2) * kv;
  if (m.biases || m.o_bias) p = p + h;
  if (m.qk_norm) p = p + n<N>(2) * n<N>(m.head_dim());
  if (m.attention_sinks) p = p + a;  // one learned sink logit per head (GPT-OSS self_attn.sinks [a])
  return p;
}

/// Dense MLP of width intermediate_size (+ biases on every matrix for GPT-2-style models).
template <class N>
N dense_mlp(const ModelSpec& m) {
  const N h = n<N>(m.hidden_size), f = n<N>(m.intermediate_size), mats = n<N>(mlp_matrices(m));
  N p = mats * h * f;
  if (m.biases) p = p + n<N>(mlp_matrices(m) - 1) * f + h;
  return p;
}

/// One routed expert: mats x h x expert width (Mixtral, DeepSeek, Qwen experts have no biases); with
/// ModelSpec::expert_bias the up (+ gate) and down biases too, (mats - 1) x width + h (GPT-OSS
/// gate_up_proj_bias [E, 2f], down_proj_bias [E, h]).
template <class N>
N expert(const ModelSpec& m) {
  if (!m.moe.enabled()) return n<N>(0);
  const N h = n<N>(m.hidden_size), f = n<N>(m.moe.expert_intermediate_size);
  N p = n<N>(mlp_matrices(m)) * h * f;
  if (m.expert_bias) p = p + n<N>(mlp_matrices(m) - 1) * f + h;
  return p;
}

/// Shared experts, router (E x h [+ E correction bias]) and Qwen's shared-expert gate (1 x h).
template <class N>
N moe_replicated(const ModelSpec& m) {
  if (!m.moe.enabled()) return n<N>(0);
  const MoeSpec& e = m.moe;
  const N h = n<N>(m.hidden_size);
  N p = n<N>(e.num_shared_experts) * n<N>(mlp_matrices(m)) * h * n<N>(e.shared_expert_intermediate_size);
  p = p + h * n<N>(e.num_experts);
  if (e.router_bias) p = p + n<N>(e.num_experts);
  if (e.shared_expert_gate) p = p + h;
  return p;
}

template <class N>
N layer_norms(const ModelSpec& m) {
  return n<N>(m.norms_per_layer) * n<N>(per_norm(m)) * n<N>(m.hidden_size);
}

/// Token embedding (+ learned position table).
template <class N>
N embedding(const ModelSpec& m) {
  N p = n<N>(m.vocab_size) * n<N>(m.hidden_size);
  if (m.learned_positions) p = p + n<N>(m.max_position_embeddings) * n<N>(m.hidden_size);
  return p;
}

/// Every layer's MLPs: dense layers x dense MLP + MoE layers x (E experts + replicated part).
template <class N>
N all_mlps(const ModelSpec& m) {
  const int64_t moe_layers = m.num_moe_layers();
  const N moe_mlp = n<N>(m.moe.num_experts) * expert<N>(m) + moe_replicated<N>(m);
  return n<N>(m.num_layers - moe_layers) * dense_mlp<N>(m) + n<N>(moe_layers) * moe_mlp;
}

/// Embedding + L x (attention + norms) + all MLPs + final norm + untied LM head.
template <class N>
N total(const ModelSpec& m) {
  N p = embedding<N>(m) + n<N>(m.num_layers) * (attention<N>(m) + layer_norms<N>(m)) + all_mlps<N>(m);
  p = p + n<N>(per_norm(m)) * n<N>(m.hidden_size);
  if (!m.tie_word_embeddings) p = p + n<N>(m.vocab_size) * n<N>(m.hidden_size);
  return p;
}

/// One multi-token-prediction module without the embedding and LM head it shares with the main model
/// (DeepSeek-V3 report sec. 2.2; Megatron-Core MultiTokenPredictionLayer): enorm and hnorm, eh_proj
/// (2h -> h, no bias), one transformer layer of the main model's last kind (MoE when the model has
/// MoE layers) and its final_layernorm. DeepSeek-V3: 11.5B of weights.
template <class N>
N mtp_module(const ModelSpec& m) {
  const N h = n<N>(m.hidden_size);
  const N mlp = m.num_moe_layers() > 0 ? n<N>(m.moe.num_experts) * expert<N>(m) + moe_replicated<N>(m) : dense_mlp<N>(m);
  return n<N>(3) * n<N>(per_norm(m)) * h + n<N>(2) * h * h + attention<N>(m) + layer_norms<N>(m) + mlp;
}

/// total minus the routed experts a token does not visit: MoE layers x (E - k) x one expert.
template <class N>
N active(const ModelSpec& m) {
  if (!m.moe.enabled()) return total<N>(m);
  const N unused = n<N>(m.moe.num_experts - m.moe.experts_per_token);
  return total<N>(m) - n<N>(m.num_moe_layers()) * unused * expert<N>(m);
}

}  // namespace meshplan::model_params
