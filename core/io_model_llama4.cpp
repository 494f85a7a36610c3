// Llama 4's text decoder keys (model_type llama4_text) and chunked attention, read into ModelSpec.
#include <string>

#include "core/io_model.h"

namespace meshplan::io_model {

using io_detail::Reader;

namespace {

// Layers with chunked attention: Llama4TextConfig's layer_types when given (chunked_attention or
// full_attention per layer), else its default, chunked on every layer that uses RoPE: no_rope_layers
// (1 = RoPE) or, without it, a NoPE layer every no_rope_layer_interval layers
// (transformers models/llama4/configuration_llama4.py, Llama4TextConfig.__post_init__).
int64_t llama4_chunked_layers(Reader& r, const YAML::Node& root, const ModelSpec& m) {
  const int64_t L = m.num_layers;
  const bool typed = Reader::has(root, "layer_types");
  const std::string key = typed ? "layer_types" : "no_rope_layers";
  // Each entry: (chunked spelling, full spelling).
  const char* chunked_name = typed ? "chunked_attention" : "1";
  const char* full_name = typed ? "full_attention" : "0";
  if (Reader::has(root, key) && !(root[key].IsSequence() && root[key].size() == 0)) {
    const YAML::Node list = root[key];
    if (!list.IsSequence() || static_cast<int64_t>(list.size()) != L) {
      r.fail(key, io_detail::node_text(list), "must list one entry per layer (" + std::to_string(L) + ")", "");
      return 0;
    }
    int64_t chunked = 0;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string v = list[i].IsScalar() ? list[i].Scalar() : std::string();
      if (v != chunked_name && v != full_name)
        r.fail(key + "[" + std::to_string(i) + "]", v, "is not an attention type meshplan costs",
               typed ? "chunked_attention or full_attention" : "1 (RoPE) or 0 (NoPE)");
      chunked += v == chunked_name ? 1 : 0;
    }
    return chunked;
  }
  const int64_t interval = r.integer(root, "no_rope_layer_interval", "no_rope_layer_interval", int64_t{4},
                                     "a NoPE (full attention) layer every n layers");
  if (interval <= 0) {
    r.fail("no_rope_layer_interval", std::to_string(interval), "must be positive", "Llama 4: 4");
    return 0;
  }
  return L - L / interval;  // layer i has RoPE when (i + 1) % interval != 0
}

// Llama 4's MoE layout (modeling_llama4.py): Llama4TextMoe = num_local_experts routed experts of
// intermediate_size (Llama4TextExperts), a router of E x h without bias, and one always-on
// shared_expert = Llama4TextMLP(config) of intermediate_size; the other layers are Llama4TextMLP of
// intermediate_size_mlp. MoE layers: moe_layers, by default every interleave_moe_layer_step-th from
// step - 1 (range(step - 1, L, step)), i.e. layer i when (i + 1) % step == 0.
void read_llama4_moe(Reader& r, const YAML::Node& root, ModelSpec& m) {
  MoeSpec& x = m.moe;
  if (Reader::has(root, "intermediate_size_mlp"))
    m.intermediate_size = r.integer(root, "intermediate_size_mlp", "intermediate_size_mlp", std::nullopt,
                                    "width of the dense (non-MoE) layers' MLP");
  if (!x.enabled()) return;
  if (!Reader::has(root, "n_shared_experts")) x.num_shared_experts = 1;
  if (!Reader::has(root, "shared_expert_intermediate_size")) x.shared_expert_intermediate_size = x.expert_intermediate_size;
  if (Reader::has(root, "moe_layer_freq")) return;  // meshplan's canonical spelling (model_to_json)
  const int64_t step = r.integer(root, "interleave_moe_layer_step", "interleave_moe_layer_step", int64_t{1},
                                 "every n-th layer is MoE");
  if (step <= 0) {
    r.fail("interleave_moe_layer_step", std::to_string(step), "must be positive", "Scout: 1, Maverick: 2");
    return;
  }
  x.layer_freq = step;
  x.layer_phase = 1;
  if (!Reader::has(root, "moe_layers")) return;
  const YAML::Node list = root["moe_layers"];
  bool same = list.IsSequence();
  int64_t expected = step - 1;
  for (size_t i = 0; same && i < list.size(); ++i, expected += step)
    same = list[i].IsScalar() && list[i].Scalar() == std::to_string(expected);
  if (!same || expected < m.num_layers)
    r.fail("moe_layers", io_detail::node_text(list), "is not every interleave_moe_layer_step-th layer, the only layout modelled",
           "moe_layers = range(step - 1, num_hidden_layers, step), as transformers derives it");
}

}  // namespace

void read_llama4(Reader& r, const YAML::Node& root, ModelSpec& m) {
  const bool llama4 = m.model_type == "llama4_text";
  // Elsewhere these change the count in ways not modelled (no_rope_layers and its interval, NoPE layers,
  // have no weights: ignored outside Llama 4, e.g. SmolLM3's).
  for (const char* key : {"intermediate_size_mlp", "interleave_moe_layer_step", "moe_layers"})
    if (!llama4 && Reader::has(root, key))
      r.fail(key, io_detail::node_text(root[key]), "changes the parameter count and is read for model_type llama4_text only",
             "give model_type: llama4_text if this is Llama 4's language model");
  if (llama4) read_llama4_moe(r, root, m);
  // attention_chunk_size: Llama4TextConfig's default 8192 (null: none); other model types only with
  // meshplan's own chunked_attention_layers.
  const bool own = Reader::has(root, "chunked_attention_layers");
  if (!llama4 && !own) {
    if (Reader::has(root, "attention_chunk_size"))
      r.fail("attention_chunk_size", io_detail::node_text(root["attention_chunk_size"]),
             "needs chunked_attention_layers (how many layers chunk) outside model_type llama4_text", "");
    return;
  }
  if (root["attention_chunk_size"].IsDefined() && root["attention_chunk_size"].IsNull()) return;  // null: none
  const int64_t chunk = r.integer(root, "attention_chunk_size", "attention_chunk_size", int64_t{llama4 ? 8192 : 0},
                                  "tokens per attention block, e.g. 8192");
  if (chunk <= 0) return;
  const int64_t layers = own ? r.integer(root, "chunked_attention_layers", "chunked_attention_layers", int64_t{0},
                                         "layers with chunked attention")
                             : llama4_chunked_layers(r, root, m);
  if (layers < 0 || layers > m.num_layers)
    r.fail("chunked_attention_layers", std::to_string(layers), "must be 0.." + std::to_string(m.num_layers), "");
  if (layers > 0 && m.sliding_window > 0 && m.sliding_window_layers > 0)
    r.fail("attention_chunk_size", std::to_string(chunk), "with a sliding window is not modelled", "");
  m.attention_chunk = chunk;
  m.chunked_layers = layers;
}

}  // namespace meshplan::io_model
