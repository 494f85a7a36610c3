// Architecture keys of model files: head_dim, attention biases, Qwen3 Q/K norms, Falcon's layout,
// MoE (Mixtral, DeepSeek-V2/V3, Qwen-MoE) and DeepSeek's multi-head latent attention.
#include <string>

#include "core/checked.h"
#include "core/io_model.h"

namespace meshplan::io_model {

using io_detail::Reader;

namespace {

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// Falcon (transformers FalconConfig / FalconDecoderLayer): fused QKV of a*d + 2*g*d rows where
// g = num_kv_heads with new_decoder_architecture, 1 with multi_query, else a; every norm is a
// LayerNorm with a bias; new_decoder_architecture has num_ln_in_parallel_attn norms (default 2),
// else parallel_attn has one (input_layernorm) and the serial block two; `bias` puts biases on
// every linear layer; the MLP is 4h (ffn_hidden_size) GELU. Defaults are FalconConfig's.
void read_falcon(Reader& r, const YAML::Node& root, ModelSpec& m) {
  const bool legacy_new = m.model_type == "RefinedWeb";  // Falcon-40B's original model_type
  const bool new_arch = r.boolean(root, "new_decoder_architecture", "new_decoder_architecture", legacy_new,
                                  "true for Falcon-40B/180B (grouped KV heads, two LayerNorms)");
  const bool multi_query = r.boolean(root, "multi_query", "multi_query", true, "true for Falcon-7B");
  m.parallel_attn = r.boolean(root, "parallel_attn", "parallel_attn", true,
                              "attention and MLP read the same norm output");
  if (!Reader::has(root, "biases")) m.biases = r.boolean(root, "bias", "bias", false, "biases on every linear layer");
  m.norm_bias = true;
  if (!Reader::has(root, "num_key_value_heads")) {
    const std::string kv_key = Reader::first_present(root, {"num_kv_heads", "n_head_kv"});
    if (new_arch)
      m.num_kv_heads = kv_key.empty() ? m.num_heads : r.integer(root, kv_key, kv_key, m.num_heads, "e.g. 8");
    else
      m.num_kv_heads = multi_query ? 1 : m.num_heads;
  }
  if (!Reader::has(root, "norms_per_layer")) {
    if (new_arch)
      m.norms_per_layer = r.integer(root, "num_ln_in_parallel_attn", "num_ln_in_parallel_attn", int64_t{2},
                                    "1 or 2 LayerNorms per layer");
    else
      m.norms_per_layer = m.parallel_attn ? 1 : 2;
  }
  if (Reader::has(root, "ffn_hidden_size") && !Reader::has(root, "intermediate_size"))
    m.intermediate_size = r.integer(root, "ffn_hidden_size", "ffn_hidden_size", int64_t{0}, "MLP width");
}

// Qwen2 / Qwen2-MoE put biases on Q, K, V (not O) without a config key (Qwen2Attention);
// Qwen3 / Qwen3-MoE and Gemma 3 have none but RMS-normalise each Q and K head (q_norm, k_norm of head_dim).
// attention_bias (Llama, Mistral, Qwen3, Gemma, DeepSeek) puts biases on Q, K, V and O.
void read_attention_extras(Reader& r, const YAML::Node& root, ModelSpec& m) {
  const bool qwen2 = m.model_type == "qwen2" || m.model_type == "qwen2_moe";
  const bool qwen3 = m.model_type == "qwen3" || m.model_type == "qwen3_moe";
  const bool gemma3 = m.model_type == "gemma3_text";
  if (Reader::has(root, "head_dim"))
    m.head_dim_override = r.integer(root, "head_dim", "head_dim", int64_t{0}, "per-head width, e.g. 256");
  const bool attention_bias = r.boolean(root, "attention_bias", "attention_bias", false,
                                        "biases on the Q, K, V and output projections");
  if (attention_bias && m.mla.enabled())
    r.fail("attention_bias", "true", "is not modelled with multi-head latent attention",
           "DeepSeek configs give attention_bias: false");
  m.qkv_bias = r.boolean(root, "qkv_bias", "qkv_bias", qwen2 || attention_bias, "biases on Q, K and V");
  m.o_bias = r.boolean(root, "o_bias", "o_bias", attention_bias && !qwen2, "bias on the output projection");
  // use_qk_norm: Llama 4's is a weightless L2 norm (Llama4TextL2Norm); elsewhere (GLM-4.5's
  // Glm4MoeAttention) a q_norm / k_norm RMSNorm of head_dim with weights, as Qwen3's.
  const bool use_qk_norm = m.model_type != "llama4_text" &&
                           r.boolean(root, "use_qk_norm", "use_qk_norm", false, "RMSNorm of head_dim on Q and K");
  m.qk_norm = r.boolean(root, "qk_norm", "qk_norm", qwen3 || gemma3 || use_qk_norm,
                        "RMSNorm of head_dim on each Q and K head");
  if (Reader::has(root, "norm_bias")) m.norm_bias = r.boolean(root, "norm_bias", "norm_bias", false, "LayerNorm bias");
  // Gemma 2 / 3 (Gemma2DecoderLayer, Gemma3DecoderLayer): input, post-attention, pre-feedforward and
  // post-feedforward RMSNorms, each of hidden_size.
  if (m.model_type == "gemma2" || gemma3) m.norms_per_layer = 4;
  if (Reader::has(root, "norms_per_layer"))
    m.norms_per_layer = r.integer(root, "norms_per_layer", "norms_per_layer", int64_t{2}, "1 to 4 (2 pre-norms; 4 with Gemma 2/3's post-norms)");
  if (Reader::has(root, "parallel_attn") && !falcon_family(m.model_type))
    m.parallel_attn = r.boolean(root, "parallel_attn", "parallel_attn", false, "true for a parallel block");
  if (r.boolean(root, "mlp_bias", "mlp_bias", false, "biases on the MLP projections"))
    r.fail("mlp_bias", "true", "changes the parameter count and is not modelled",
           "set biases: true for GPT-2-style biases everywhere, or drop it if the model has none");
}

// MoE keys, read whatever the model_type: experts = n_routed_experts (DeepSeek) | num_local_experts
// (Mixtral) | num_experts (Qwen); expert width = moe_intermediate_size, else intermediate_size
// (Mixtral). Shared experts: DeepSeek's n_shared_experts of moe_intermediate_size each (transformers
// DeepseekV3MoE builds one MLP of n_shared x moe_intermediate_size: the same count), Qwen's one
// shared expert of shared_expert_intermediate_size with a 1 x h sigmoid gate (Qwen2MoeSparseMoeBlock).
// Layout: first_k_dense_replace dense layers, then every moe_layer_freq-th layer (phase 0), or
// every decoder_sparse_step-th counting from 1 (Qwen, phase 1). topk_method noaux_tc (DeepSeek-V3)
// adds the router's e_score_correction_bias of E values.
void read_moe(Reader& r, const YAML::Node& root, ModelSpec& m) {
  const std::string e_key = Reader::first_present(root, {"n_routed_experts", "num_local_experts", "num_experts"});
  if (e_key.empty()) return;
  MoeSpec& x = m.moe;
  x.num_experts = r.integer(root, e_key, e_key, int64_t{0}, "routed experts per MoE layer");
  if (x.num_experts == 0) return;
  x.experts_per_token = r.integer(root, "num_experts_per_tok", "num_experts_per_tok", std::nullopt,
                                  "top-k experts each token visits, e.g. 2");
  x.expert_intermediate_size = r.integer(root, "moe_intermediate_size", "moe_intermediate_size",
                                         m.intermediate_size, "FFN width of one routed expert");
  const bool qwen_shared = Reader::has(root, "shared_expert_intermediate_size");
  x.num_shared_experts = r.integer(root, "n_shared_experts", "n_shared_experts", int64_t{qwen_shared ? 1 : 0},
                                   "always-on experts");
  x.shared_expert_intermediate_size =
      r.integer(root, "shared_expert_intermediate_size", "shared_expert_intermediate_size",
                x.expert_intermediate_size, "FFN width of one shared expert");
  if (x.shared_expert_intermediate_size == 0) x.num_shared_experts = 0;
  x.shared_expert_gate = r.boolean(root, "shared_expert_gate", "shared_expert_gate",
                                   starts_with(m.model_type, "qwen2_moe") && x.num_shared_experts > 0,
                                   "Qwen2-MoE's sigmoid gate on the shared expert");
  x.first_dense_layers = r.integer(root, "first_k_dense_replace", "first_k_dense_replace", int64_t{0},
                                   "leading layers with a dense MLP");
  const bool qwen_step = Reader::has(root, "decoder_sparse_step");
  const std::string freq_key = qwen_step ? "decoder_sparse_step" : "moe_layer_freq";
  x.layer_freq = r.integer(root, freq_key, freq_key, int64_t{1}, "every n-th layer is MoE");
  x.layer_phase = r.integer(root, "moe_layer_phase", "moe_layer_phase", int64_t{qwen_step ? 1 : 0},
                            "0: layer i is MoE when i % freq == 0; 1: when (i + 1) % freq == 0");
  const std::string topk = r.text(root, "topk_method", "topk_method", std::string(), "e.g. noaux_tc");
  x.router_bias = r.boolean(root, "router_bias", "router_bias", topk == "noaux_tc" || m.model_type == "gpt_oss",
                            "router with E bias/correction values (DeepSeek-V3 noaux_tc, GPT-OSS's router bias)");
  // Group-limited routing (DeepSeek-V2/V3; Megatron-Bridge maps them to moe_router_num_groups and
  // moe_router_group_topk, models/conversion/model_bridge.py): null or absent = no limit.
  x.router_groups = r.integer(root, "n_group", "n_group", int64_t{1}, "expert groups of the router, e.g. 8");
  x.router_group_topk = r.integer(root, "topk_group", "topk_group", x.router_groups, "groups a token's experts come from, e.g. 4");
  if (Reader::has(root, "mlp_only_layers")) {
    const YAML::Node list = root["mlp_only_layers"];
    if (!list.IsSequence() || list.size() > 0)
      r.fail("mlp_only_layers", io_detail::node_text(list), "changes the parameter count and is not modelled",
             "only an empty list is read; use decoder_sparse_step / first_k_dense_replace");
  }
}

// DeepSeek-V2/V3 multi-head latent attention: enabled by kv_lora_rank; q_lora_rank null = none.
void read_mla(Reader& r, const YAML::Node& root, ModelSpec& m) {
  if (!Reader::has(root, "kv_lora_rank")) return;
  MlaSpec& x = m.mla;
  x.kv_lora_rank = r.integer(root, "kv_lora_rank", "kv_lora_rank", int64_t{0}, "compressed KV width, e.g. 512");
  if (x.kv_lora_rank == 0) return;
  x.q_lora_rank = r.integer(root, "q_lora_rank", "q_lora_rank", int64_t{0}, "compressed Q width; null for none");
  x.qk_rope_head_dim = r.integer(root, "qk_rope_head_dim", "qk_rope_head_dim", std::nullopt, "e.g. 64");
  x.qk_nope_head_dim = r.integer(root, "qk_nope_head_dim", "qk_nope_head_dim", std::nullopt, "e.g. 128");
  x.v_head_dim = r.integer(root, "v_head_dim", "v_head_dim", std::nullopt, "e.g. 128");
  m.num_kv_heads = m.num_heads;  // MLA has no K/V heads of its own; the config repeats the head count
  // Training materialises per-head K of nope+rope (transformers' qk_head_dim): the width attention
  // scores multiply by, so head_dim() gives it to the cost model (parameters use the MLA formula).
  if (!Reader::has(root, "head_dim")) m.head_dim_override = x.qk_nope_head_dim + x.qk_rope_head_dim;
}

}  // namespace

void read_architecture(Reader& r, const YAML::Node& root, ModelSpec& m) {
  if (falcon_family(m.model_type)) read_falcon(r, root, m);
  read_mla(r, root, m);
  read_attention_extras(r, root, m);
  read_moe(r, root, m);
  read_sliding_window(r, root, m);
  read_llama4(r, root, m);
  read_eager_extras(r, root, m);
  // Multi-token prediction trained with the model (core/mtp_config.h): meshplan's key only, since
  // num_nextn_predict_layers says what a checkpoint holds, not what a run trains.
  m.mtp_layers = r.integer(root, "mtp_layers", "mtp_layers", int64_t{0},
                           "MTP modules trained with the model (Megatron-Core --mtp-num-layers); 0 = none");
  m.checkpoint_mtp_layers = r.integer(root, "num_nextn_predict_layers", "num_nextn_predict_layers", int64_t{0},
                                      "multi-token-prediction modules of the checkpoint (DeepSeek-V3: 1)");
}

}  // namespace meshplan::io_model
