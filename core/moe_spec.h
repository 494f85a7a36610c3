// MoeSpec and MlaSpec: the mixture-of-experts and multi-head latent attention parts of a model shape.
#pragma once
#include <cstdint>

namespace meshplan {

/// Mixture-of-experts MLP, as Hugging Face configs describe it (Mixtral, DeepSeek-V2/V3, Qwen-MoE).
/// A model is dense when num_experts == 0; then every other field is ignored.
struct MoeSpec {
  int64_t num_experts = 0;               // routed experts per MoE layer (E)
  int64_t experts_per_token = 0;         // top-k routed experts each token visits (k)
  int64_t expert_intermediate_size = 0;  // FFN width of one routed expert (per gate when gated)
  int64_t num_shared_experts = 0;        // always-on experts (DeepSeek n_shared_experts; Qwen: 1)
  int64_t shared_expert_intermediate_size = 0;  // FFN width of ONE shared expert
  int64_t first_dense_layers = 0;        // first k layers keep a dense MLP (first_k_dense_replace)
  int64_t layer_freq = 1;                // every layer_freq-th layer (after the dense ones) is MoE
  bool router_bias = false;              // router has a bias / correction term of E values
  // Added for issue 11's model files (fields above are shared with costmodel/planner/executor):
  int64_t layer_phase = 0;               // layer i is MoE when (i + layer_phase) % layer_freq == 0:
                                         // 0 for DeepSeek (moe_layer_freq), 1 for Qwen (decoder_sparse_step)
  bool shared_expert_gate = false;       // Qwen2-MoE: a sigmoid gate h -> 1 on the shared expert (h weights)
  // Group-limited routing (DeepSeek-V2/V3 n_group / topk_group; Megatron-Core moe_router_num_groups /
  // moe_router_group_topk): the E experts form router_groups groups of consecutive experts and a token's k
  // experts come from router_group_topk of them. 1 / 1 = no limit. No parameters; the flex dispatcher's
  // traffic depends on it (costmodel/moe_dedup_dispatch.h).
  int64_t router_groups = 1;
  int64_t router_group_topk = 1;

  bool enabled() const { return num_experts > 0; }
  /// Layer `i` (0-based) of a model with MoE enabled uses experts. Follows transformers'
  /// DeepseekV3DecoderLayer (i >= first_k_dense_replace and i % moe_layer_freq == 0) and
  /// Qwen2MoeDecoderLayer ((i + 1) % decoder_sparse_step == 0).
  bool is_moe_layer(int64_t i) const {
    const int64_t freq = layer_freq > 0 ? layer_freq : 1;
    return enabled() && i >= first_dense_layers && (i + layer_phase) % freq == 0;
  }
};

/// DeepSeek-V2/V3 multi-head latent attention; enabled when kv_lora_rank > 0.
struct MlaSpec {
  int64_t q_lora_rank = 0;       // 0 = Q projected directly (V2-Lite)
  int64_t kv_lora_rank = 0;      // compressed KV width
  int64_t qk_rope_head_dim = 0;  // rotary part of each Q/K head
  int64_t qk_nope_head_dim = 0;  // non-rotary part of each Q/K head
  int64_t v_head_dim = 0;        // per-head V width

  bool enabled() const { return kv_lora_rank > 0; }
};

}  // namespace meshplan
