// Model files: Hugging Face config.json / GPT-2 keys in YAML or JSON -> ModelSpec, and back to JSON.
#include <nlohmann/json.hpp>

#include <map>

#include "core/checked.h"
#include "core/io.h"
#include "core/io_detail.h"
#include "core/io_model.h"

namespace meshplan {

using io_detail::Reader;

namespace {

// Model families whose configs imply a gated (SwiGLU/GeGLU) MLP. gpt_oss: its experts hold
// gate_up_proj [E, h, 2 f] and down_proj [E, f, h] (transformers models/gpt_oss/modeling_gpt_oss.py,
// GptOssExperts, commit 00d4b3d2), a clamped SwiGLU.
bool gated_family(const std::string& model_type) {
  for (const char* f : {"llama", "mistral", "mixtral", "qwen", "gemma", "olmo", "phi3", "internlm",
                        "yi", "deepseek", "baichuan", "cohere", "granite", "gpt_oss"})
    if (model_type.rfind(f, 0) == 0) return true;
  return false;
}

// GPT-2-style families: learned absolute positions, biases, LayerNorm, plain GELU MLP, tied head.
bool gpt2_family(const std::string& model_type) {
  return model_type == "gpt2" || model_type == "gpt3" || model_type == "megatron-gpt" ||
         model_type == "gpt_bigcode" || model_type == "opt";
}

// Dropout: an explicit `dropout: true|false` wins; otherwise true when any of the Hugging Face /
// GPT-2 dropout probabilities present is non-zero, false when all present are 0 (Llama configs give
// attention_dropout: 0.0), and with none given false for the Llama-like (gated) families, which
// train without dropout, true for everything else (GPT-2/Megatron GPT, Korthikanti's accounting).
bool read_dropout(Reader& r, const YAML::Node& root, const std::string& model_type) {
  if (Reader::has(root, "dropout"))
    return r.boolean(root, "dropout", "dropout", true, "true when the model trains with dropout");
  bool any_given = false, any_nonzero = false;
  for (const char* key : {"attention_dropout", "hidden_dropout", "resid_pdrop", "attn_pdrop", "embd_pdrop",
                          "hidden_dropout_prob", "attention_probs_dropout_prob"}) {
    if (!Reader::has(root, key)) continue;
    any_given = true;
    const double p = r.number(root, key, key, 0.0, "dropout probability, e.g. 0.0");
    if (p < 0.0 || p >= 1.0) r.fail(key, io_detail::node_text(root[key]), "must be in [0, 1)", "e.g. 0.0 or 0.1");
    if (p > 0.0) any_nonzero = true;
  }
  if (any_given) return any_nonzero;
  return !gated_family(model_type);
}

// The file's key for each canonical field (GPT-2 names when the file used them), for messages.
struct KeyNames {
  std::string hidden = "hidden_size", layers = "num_hidden_layers", heads = "num_attention_heads",
              inner = "intermediate_size", positions = "max_position_embeddings";
};

KeyNames key_names(const YAML::Node& root) {
  KeyNames k;
  auto pick = [&](std::string& name, std::initializer_list<const char*> keys) {
    std::string found = Reader::first_present(root, keys);
    if (!found.empty()) name = found;
  };
  pick(k.hidden, {"hidden_size", "n_embd"});
  pick(k.layers, {"num_hidden_layers", "n_layer"});
  pick(k.heads, {"num_attention_heads", "n_head"});
  pick(k.inner, {"intermediate_size", "n_inner"});
  pick(k.positions, {"max_position_embeddings", "n_positions", "n_ctx"});
  return k;
}

MlpKind mlp_kind(Reader& r, const YAML::Node& root, const std::string& model_type,
                 const std::string& act) {
  if (Reader::has(root, "mlp")) {
    const std::string m = r.text(root, "mlp", "mlp", std::string("gated"), "gated or plain");
    if (m == "gated") return MlpKind::Gated;
    if (m != "plain") r.fail("mlp", m, "must be gated or plain", "gated = SwiGLU (Llama), plain = GELU (GPT-2)");
    return MlpKind::Plain;
  }
  if (gated_family(model_type)) return MlpKind::Gated;
  if (act == "silu" || act == "swish" || act == "swiglu" || act == "geglu") return MlpKind::Gated;
  return MlpKind::Plain;  // GPT-2/GPT-3 style, and the classic 4*hidden MLP when nothing is said
}

void read_shape(Reader& r, const YAML::Node& root, const KeyNames& k, ModelSpec& m) {
  m.hidden_size = r.integer(root, k.hidden, k.hidden, std::nullopt, "model width, e.g. hidden_size: 4096");
  m.num_layers = r.integer(root, k.layers, k.layers, std::nullopt, "e.g. num_hidden_layers: 32");
  m.num_heads = r.integer(root, k.heads, k.heads, std::nullopt, "e.g. num_attention_heads: 32");
  m.num_kv_heads = r.integer(root, "num_key_value_heads", "num_key_value_heads", m.num_heads,
                             "GQA key/value heads; omit for multi-head attention");
  m.intermediate_size = r.integer(root, k.inner, k.inner, checked_mul(4, m.hidden_size).value_or(0),
                                  "MLP width; omit for 4*hidden");
  m.vocab_size = r.integer(root, "vocab_size", "vocab_size", std::nullopt, "e.g. vocab_size: 32000");
  m.max_position_embeddings = r.integer(root, k.positions, k.positions, int64_t{0},
                                        "longest sequence the model supports, e.g. 4096");
}

// Renames validate_model's canonical fields to the keys this file used (n_embd, n_head, ...).
Error with_file_keys(Error e, const KeyNames& k) {
  const std::map<std::string, std::string> rename = {{"hidden_size", k.hidden},
                                                     {"num_hidden_layers", k.layers},
                                                     {"num_attention_heads", k.heads},
                                                     {"intermediate_size", k.inner}};
  auto it = rename.find(e.field);
  if (it != rename.end()) e.field = it->second;
  return e;
}

}  // namespace

static Result<ModelSpec> parse_model_unguarded(const std::string& text, const std::string& file) {
  auto doc = io_detail::parse_yaml(text, file);
  if (!doc) return doc.error();
  const YAML::Node& root = doc.value();
  if (!root.IsMap())
    return make_error(file, "", io_detail::node_text(root), "a model file must be a mapping of keys",
                      "use Hugging Face config.json keys, e.g. hidden_size: 4096");
  Reader r(file);
  ModelSpec m;
  const KeyNames k = key_names(root);
  const bool gpt2_keys = Reader::has(root, "n_embd") || Reader::has(root, "n_layer");
  m.name = r.text(root, "name", "name", io_detail::file_stem(file), "a short model name");
  m.source = r.text(root, "source", "source", std::string(), "a citation");
  m.model_type = r.text(root, "model_type", "model_type", std::string(gpt2_keys ? "gpt2" : ""),
                        "e.g. llama or gpt2");
  const std::string act = r.text(root, "hidden_act", "hidden_act",
                                 r.text(root, "activation_function", "activation_function",
                                        std::string(), "e.g. gelu_new"),
                                 "e.g. silu or gelu");
  if (r.error) return *r.error;
  if (auto bad = io_model::unmodelled_key(root, m.model_type, file)) return *bad;
  read_shape(r, root, k, m);
  const bool gpt2_like = gpt2_family(m.model_type);
  m.mlp = mlp_kind(r, root, m.model_type, act);
  m.tie_word_embeddings = r.boolean(root, "tie_word_embeddings", "tie_word_embeddings",
                                    io_model::default_tie_word_embeddings(m.model_type, gpt2_like),
                                    "true when the LM head shares the embedding matrix");
  m.learned_positions = r.boolean(root, "learned_positions", "learned_positions", gpt2_like,
                                  "true for GPT-2 style absolute position tables");
  m.biases = r.boolean(root, "biases", "biases", gpt2_like, "true for GPT-2 style linear biases");
  m.dropout = read_dropout(r, root, m.model_type);
  m.rope_theta = r.number(root, "rope_theta", "rope_theta", 0.0, "RoPE base, e.g. 10000.0");
  io_model::read_architecture(r, root, m);
  if (r.error) return *r.error;
  ErrorList errors = validate_model(m, file);
  if (!errors.empty()) return with_file_keys(errors.front(), k);
  return m;
}

Result<ModelSpec> parse_model(const std::string& text, const std::string& file) {
  return io_detail::guarded<ModelSpec>(file, [&] { return parse_model_unguarded(text, file); });
}

Result<ModelSpec> load_model(const std::string& path) {
  auto text = read_text_file(path);
  if (!text) return text.error();
  return parse_model(text.value(), path);
}

std::string model_to_json(const ModelSpec& m) {
  nlohmann::ordered_json j;
  j["name"] = m.name;
  if (!m.source.empty()) j["source"] = m.source;
  if (!m.model_type.empty()) j["model_type"] = m.model_type;
  j["hidden_size"] = m.hidden_size;
  j["num_hidden_layers"] = m.num_layers;
  j["num_attention_heads"] = m.num_heads;
  j["num_key_value_heads"] = m.num_kv_heads;
  j["intermediate_size"] = m.intermediate_size;
  j["vocab_size"] = m.vocab_size;
  if (m.max_position_embeddings > 0) j["max_position_embeddings"] = m.max_position_embeddings;
  j["tie_word_embeddings"] = m.tie_word_embeddings;
  j["mlp"] = m.mlp == MlpKind::Gated ? "gated" : "plain";
  j["learned_positions"] = m.learned_positions;
  j["biases"] = m.biases;
  j["dropout"] = m.dropout;
  if (m.rope_theta > 0) j["rope_theta"] = m.rope_theta;
  if (m.head_dim_override > 0) j["head_dim"] = m.head_dim_override;
  j["qkv_bias"] = m.qkv_bias;
  j["o_bias"] = m.o_bias;
  j["norm_bias"] = m.norm_bias;
  j["norms_per_layer"] = m.norms_per_layer;
  j["qk_norm"] = m.qk_norm;
  if (m.sliding_window > 0) {
    j["sliding_window"] = m.sliding_window;
    j["sliding_window_layers"] = m.sliding_window_layers;
  }
  if (m.attention_chunk > 0) {
    j["attention_chunk_size"] = m.attention_chunk;
    j["chunked_attention_layers"] = m.chunked_layers;
  }
  j["parallel_attn"] = m.parallel_attn;
  if (m.glu_clamp > 0) j["swiglu_limit"] = m.glu_clamp;
  if (m.expert_bias) j["expert_bias"] = true;
  if (m.attention_sinks) j["attention_sinks"] = true;
  if (m.mtp_layers > 0) j["mtp_layers"] = m.mtp_layers;
  if (m.checkpoint_mtp_layers > 0) j["num_nextn_predict_layers"] = m.checkpoint_mtp_layers;
  if (m.rope_yarn_factor > 0) j["rope_scaling"] = {{"rope_type", "yarn"}, {"factor", m.rope_yarn_factor}};
  if (m.moe.enabled()) {
    const MoeSpec& x = m.moe;
    j["num_experts"] = x.num_experts;
    j["num_experts_per_tok"] = x.experts_per_token;
    j["moe_intermediate_size"] = x.expert_intermediate_size;
    j["n_shared_experts"] = x.num_shared_experts;
    j["shared_expert_intermediate_size"] = x.shared_expert_intermediate_size;
    j["shared_expert_gate"] = x.shared_expert_gate;
    j["first_k_dense_replace"] = x.first_dense_layers;
    j["moe_layer_freq"] = x.layer_freq;
    j["moe_layer_phase"] = x.layer_phase;
    j["router_bias"] = x.router_bias;
    if (x.router_groups > 1) {
      j["n_group"] = x.router_groups;
      j["topk_group"] = x.router_group_topk;
    }
  }
  if (m.mla.enabled()) {
    j["q_lora_rank"] = m.mla.q_lora_rank;
    j["kv_lora_rank"] = m.mla.kv_lora_rank;
    j["qk_rope_head_dim"] = m.mla.qk_rope_head_dim;
    j["qk_nope_head_dim"] = m.mla.qk_nope_head_dim;
    j["v_head_dim"] = m.mla.v_head_dim;
  }
  return format_json(j.dump());
}

}  // namespace meshplan
