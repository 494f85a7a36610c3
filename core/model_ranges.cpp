// Range checks of the architecture fields of ModelSpec: head_dim, MoE, MLA and the norm layout.
#include <string>

#include "core/limits.h"
#include "core/model_spec.h"

namespace meshplan {

namespace {

void check_moe(const ModelSpec& m, const std::string& file, ErrorList& e) {
  const MoeSpec& x = m.moe;
  limits::check_int(e, file, "num_experts", x.num_experts, 0, limits::kMaxExperts,
                    "routed experts per MoE layer (n_routed_experts / num_local_experts / num_experts); 0 = dense");
  if (!x.enabled()) return;
  limits::check_int(e, file, "num_experts_per_tok", x.experts_per_token, 1, x.num_experts,
                    "top-k experts per token, at most the number of experts");
  limits::check_int(e, file, "moe_intermediate_size", x.expert_intermediate_size, 1, limits::kMaxIntermediate,
                    "FFN width of one routed expert");
  limits::check_int(e, file, "n_shared_experts", x.num_shared_experts, 0, limits::kMaxSharedExperts,
                    "always-on experts; 0 = none");
  if (x.num_shared_experts > 0)
    limits::check_int(e, file, "shared_expert_intermediate_size", x.shared_expert_intermediate_size, 1,
                      limits::kMaxIntermediate, "FFN width of one shared expert");
  limits::check_int(e, file, "first_k_dense_replace", x.first_dense_layers, 0, m.num_layers - 1,
                    "leading layers with a dense MLP; at least one layer must be MoE");
  limits::check_int(e, file, "moe_layer_freq", x.layer_freq, 1, m.num_layers,
                    "every n-th layer is MoE (decoder_sparse_step for Qwen); 1 = every layer");
  limits::check_int(e, file, "layer_phase", x.layer_phase, 0, 1, "0 (DeepSeek) or 1 (Qwen)");
  limits::check_int(e, file, "n_group", x.router_groups, 1, x.num_experts, "expert groups of the router; 1 = none");
  limits::check_int(e, file, "topk_group", x.router_group_topk, 1, x.router_groups,
                    "groups a token's experts come from, at most n_group");
  if (e.empty() && x.num_experts % x.router_groups != 0)
    e.push_back(make_error(file, "n_group", std::to_string(x.router_groups),
                           "must divide the " + std::to_string(x.num_experts) + " experts",
                           "the router's groups are equal blocks of consecutive experts"));
  if (e.empty() && m.num_moe_layers() == 0)
    e.push_back(make_error(file, "moe_layer_freq", std::to_string(x.layer_freq),
                           "leaves no MoE layer among " + std::to_string(m.num_layers) + " layers",
                           "lower moe_layer_freq / first_k_dense_replace or drop the expert keys"));
}

void check_mla(const ModelSpec& m, const std::string& file, ErrorList& e) {
  const MlaSpec& x = m.mla;
  limits::check_int(e, file, "kv_lora_rank", x.kv_lora_rank, 0, limits::kMaxLoraRank,
                    "compressed KV width of multi-head latent attention; 0 = none");
  if (!x.enabled()) return;
  limits::check_int(e, file, "q_lora_rank", x.q_lora_rank, 0, limits::kMaxLoraRank,
                    "compressed Q width; 0 (null) = Q projected directly");
  limits::check_int(e, file, "qk_rope_head_dim", x.qk_rope_head_dim, 1, limits::kMaxHeadDim, "e.g. 64");
  limits::check_int(e, file, "qk_nope_head_dim", x.qk_nope_head_dim, 0, limits::kMaxHeadDim, "e.g. 128");
  limits::check_int(e, file, "v_head_dim", x.v_head_dim, 1, limits::kMaxHeadDim, "e.g. 128");
}

}  // namespace

void validate_model_architecture(const ModelSpec& m, const std::string& file, ErrorList& e) {
  limits::check_int(e, file, "head_dim", m.head_dim_override, 0, limits::kMaxHeadDim,
                    "per-head width; omit it (0) for hidden_size / num_attention_heads");
  limits::check_int(e, file, "norms_per_layer", m.norms_per_layer, 1, 4,
                    "1 for Falcon's parallel block with one LayerNorm, 4 for Gemma 2/3's pre- and post-norms, else 2");
  check_moe(m, file, e);
  check_mla(m, file, e);
  limits::check_int(e, file, "num_nextn_predict_layers", m.checkpoint_mtp_layers, 0, limits::kMaxMtpLayers,
                    "multi-token-prediction modules of the checkpoint; 0 = none");
  limits::check_int(e, file, "mtp_layers", m.mtp_layers, 0, limits::kMaxMtpLayers,
                    "multi-token-prediction modules trained with the model (DeepSeek-V3: 1); 0 = none");
  if (m.moe.enabled() && m.biases)
    e.push_back(make_error(file, "biases", "true", "is not modelled for mixture-of-experts layers",
                           "expert MLPs are counted without biases (Mixtral, DeepSeek, Qwen-MoE)"));
}

}  // namespace meshplan
