// Model-file keys: which are read, which are known not to change the parameter count, which change
// it in ways meshplan does not model (an error), and each model class's tie_word_embeddings default.
#include <algorithm>
#include <cstring>
#include <string>

#include "core/io.h"
#include "core/io_model.h"

namespace meshplan::io_model {

namespace {

// Keys parse_model reads (io.cpp, io_model_arch.cpp), in Hugging Face and meshplan spellings.
const char* const kRead[] = {
    "name", "source", "model_type", "hidden_act", "activation_function", "hidden_size", "n_embd",
    "num_hidden_layers", "n_layer", "num_attention_heads", "n_head", "num_key_value_heads",
    "intermediate_size", "n_inner", "vocab_size", "max_position_embeddings", "n_positions", "n_ctx",
    "tie_word_embeddings", "learned_positions", "biases", "mlp", "dropout", "rope_theta",
    "attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop",
    "hidden_dropout_prob", "attention_probs_dropout_prob",
    // head_dim (Gemma, Qwen3), biases and norms (Llama/Qwen attention_bias, meshplan's own keys)
    "head_dim", "attention_bias", "qkv_bias", "o_bias", "norm_bias", "norms_per_layer", "qk_norm",
    "mlp_bias",
    // Falcon (transformers FalconConfig, and the legacy RefinedWeb keys)
    "multi_query", "new_decoder_architecture", "parallel_attn", "num_kv_heads", "n_head_kv", "bias",
    "alibi", "ffn_hidden_size", "num_ln_in_parallel_attn",
    // MoE: Mixtral, DeepSeek-V2/V3, Qwen2-MoE / Qwen3-MoE, and meshplan's canonical spellings
    "num_local_experts", "n_routed_experts", "num_experts", "num_experts_per_tok",
    "moe_intermediate_size", "n_shared_experts", "shared_expert_intermediate_size",
    "shared_expert_gate", "first_k_dense_replace", "moe_layer_freq", "decoder_sparse_step",
    "moe_layer_phase", "mlp_only_layers", "topk_method", "router_bias", "n_group", "topk_group",
    // DeepSeek MLA
    "q_lora_rank", "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim",
    // DeepSeek-V3 multi-token prediction: num_nextn_predict_layers read and not counted (what the
    // checkpoint holds, DESIGN.md); meshplan's mtp_layers trains them (core/mtp_config.h)
    "num_nextn_predict_layers", "mtp_layers",
    // sliding-window attention (io_model_window.cpp)
    "sliding_window", "use_sliding_window", "max_window_layers", "layer_types", "sliding_window_layers",
    "sliding_window_pattern", "_sliding_window_pattern",
    // Llama 4's text decoder and chunked attention (io_model_llama4.cpp)
    "intermediate_size_mlp", "interleave_moe_layer_step", "moe_layers", "no_rope_layers", "no_rope_layer_interval",
    "attention_chunk_size", "chunked_attention_layers", "use_qk_norm",
    // clamped GLU, YaRN RoPE, expert biases (io_model_eager.cpp)
    "swiglu_limit", "rope_scaling", "expert_bias", "attention_sinks",
};

// Keys of real configs known not to change the parameter count: numerics, tokens, RoPE/attention
// variants without weights, routing policy and loss coefficients, serving and bookkeeping.
const char* const kHarmless[] = {
    "architectures", "auto_map", "_name_or_path", "_attn_implementation_autoset", "transformers_version", "torch_dtype", "dtype",
    "use_cache", "bos_token_id", "eos_token_id", "pad_token_id", "initializer_range",
    "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "rope_type",
    "rope_parameters", "partial_rotary_factor", "rotary_pct", "rotary_emb_base",
    "pretraining_tp", "quantization_config",
    "output_router_logits", "router_aux_loss_coef", "router_jitter_noise", "aux_loss_alpha",
    "seq_aux", "norm_topk_prob", "routed_scaling_factor", "scoring_func",
    "ep_size", "apply_residual_connection_post_layernorm", "hidden_activation", "attn_logit_softcapping",
    "final_logit_softcapping", "query_pre_attn_scalar", "use_return_dict", "output_attentions",
    "output_hidden_states", "is_decoder", "tokenizer_class", "model_max_length", "bias_dropout_fusion",
    "scale_attn_weights", "summary_type", "summary_use_proj", "summary_activation",
    "summary_proj_to_labels", "summary_first_dropout", "reorder_and_upcast_attn",
    "scale_attn_by_inverse_layer_idx", "task_specific_params", "moe_router_dtype",
    // Llama 4 (Llama4TextAttention): the NoPE layers' query scaling, and bookkeeping
    "attn_temperature_tuning", "floor_scale", "attn_scale", "for_llm_compressor",
    "cache_implementation",
    // Gemma 2 / 3: the local layers' RoPE base, the window's second spelling (read as sliding_window),
    // EmbeddingGemma's bidirectional mask
    "rope_local_base_freq", "sliding_window_size", "use_bidirectional_attention",
};

// Keys that change the parameter count in ways meshplan does not model. Each entry: key, and why.
struct Unmodelled {
  const char* key;
  const char* why;
};
const Unmodelled kUnmodelled[] = {
    {"text_config", "nested language-model config (multimodal or Llama 4): give its keys at the top level"},
    {"vision_config", "a vision encoder is not counted"},
    {"audio_config", "an audio encoder is not counted"},
    {"ffn_config", "DBRX-style nested expert config is not read"},
    {"attn_config", "DBRX-style nested attention config is not read"},
    {"cross_attention_layers", "cross-attention layers are not modelled"},
    {"moe_layer_start_index", "this MoE layer layout is not read"},
    {"moe_num_experts", "this MoE spelling is not read (use num_experts)"},
    {"moe_num_shared_experts", "this MoE spelling is not read (use n_shared_experts)"},
    {"expert_layer_period", "Jamba's expert layer layout is not read"},
    {"attn_layer_period", "hybrid attention/state-space layers are not modelled"},
    {"qk_layernorm", "Q/K LayerNorm over the hidden width is not modelled"},
    {"use_qkv_bias", "this QKV-bias spelling is not read (use qkv_bias)"},
    {"lm_head_bias", "an LM-head bias is not counted"},
};

// Model types whose layers differ from every family read here (extra norms, hybrid layers, nested
// configs); their configs would be counted wrong, so they are refused by name.
const char* const kUnmodelledTypes[] = {
    "llama4", "gemma3", "dbrx", "jamba", "olmoe", "olmo2",
    "mllama", "mamba", "mamba2", "falcon_mamba", "phimoe",
};

template <size_t N>
bool contains(const char* const (&list)[N], const std::string& key) {
  return std::any_of(std::begin(list), std::end(list), [&](const char* k) { return key == k; });
}

// A key counts as set unless it is null, false, 0, an empty list or an empty map.
bool is_set(const YAML::Node& v) {
  if (!v.IsDefined() || v.IsNull()) return false;
  if (v.IsSequence() || v.IsMap()) return v.size() > 0;
  const std::string& s = v.Scalar();
  return !(s == "false" || s == "False" || s == "0" || s == "0.0" || s.empty());
}

}  // namespace

KeyKind classify_key(const std::string& key) {
  if (contains(kRead, key)) return KeyKind::Read;
  if (contains(kHarmless, key)) return KeyKind::Harmless;
  for (const Unmodelled& u : kUnmodelled)
    if (key == u.key) return KeyKind::Unmodelled;
  return KeyKind::Unknown;
}

std::optional<Error> unmodelled_key(const YAML::Node& root, const std::string& model_type,
                                    const std::string& file) {
  if (model_type == "llama4")  // the multimodal wrapper: its language model is the text_config
    return make_error(file, "model_type", model_type,
                      "is Llama 4's multimodal wrapper (text_config + vision_config): meshplan plans the language model",
                      "pass its text_config (model_type llama4_text) as the model file, e.g. "
                      "jq .text_config config.json > llama4-text.json; the vision encoder is not counted");
  if (model_type == "gemma3")  // the multimodal wrapper: its language model is the text_config
    return make_error(file, "model_type", model_type,
                      "is Gemma 3's multimodal wrapper (text_config + vision_config): meshplan plans the language model",
                      "pass its text_config (model_type gemma3_text) as the model file, e.g. "
                      "jq .text_config config.json > gemma3-text.json; the vision encoder is not counted");
  if (contains(kUnmodelledTypes, model_type))
    return make_error(file, "model_type", model_type,
                      "has layers meshplan does not model (extra norms, hybrid or nested layers), "
                      "so its parameter count would be wrong",
                      "describe it with explicit keys and a modelled model_type (e.g. llama), or drop model_type");
  for (const Unmodelled& u : kUnmodelled) {
    if (!io_detail::Reader::has(root, u.key) || !is_set(root[u.key])) continue;
    return make_error(file, u.key, io_detail::node_text(root[u.key]),
                      std::string("changes the parameter count and is not modelled: ") + u.why,
                      "remove the key only if the model does not use it (DESIGN.md \"Model files\")");
  }
  return std::nullopt;
}

// tie_word_embeddings defaults of each model class's config in transformers
// (src/transformers/models/<type>/configuration_<type>.py): PretrainedConfig's default is True;
// LlamaConfig, MistralConfig, MixtralConfig, Qwen2Config, Qwen2MoeConfig, Qwen3Config,
// Qwen3MoeConfig, DeepseekV2Config, DeepseekV3Config, Llama4TextConfig pass tie_word_embeddings=False; GemmaConfig,
// Gemma2Config and Gemma3TextConfig pass True; FalconConfig and GPT2Config do not override it (True).
bool default_tie_word_embeddings(const std::string& model_type, bool fallback) {
  static const char* const kUntied[] = {"llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
                                        "qwen3_moe", "deepseek_v2", "deepseek_v3", "llama4_text"};
  static const char* const kTied[] = {"gemma", "gemma2", "gemma3_text", "falcon", "RefinedWeb", "RefinedWebModel",
                                      "gpt2"};
  if (contains(kUntied, model_type)) return false;
  if (contains(kTied, model_type)) return true;
  return fallback;
}

bool falcon_family(const std::string& model_type) {
  return model_type == "falcon" || model_type == "RefinedWeb" || model_type == "RefinedWebModel";
}

}  // namespace meshplan::io_model

namespace meshplan {

std::vector<std::string> unclassified_model_keys(const std::string& text) {
  std::vector<std::string> out;
  auto doc = io_detail::parse_yaml(text, "model");
  if (!doc || !doc.value().IsMap()) return out;
  for (const auto& kv : doc.value()) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = kv.first.Scalar();
    if (io_model::classify_key(key) == io_model::KeyKind::Unknown) out.push_back(key);
  }
  return out;
}

}  // namespace meshplan
