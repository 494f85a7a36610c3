// Sliding-window attention keys of model files: the window and how many layers use it (Mistral, GPT-OSS,
// Qwen2 with use_sliding_window, Gemma 2 / 3), read into ModelSpec::sliding_window(_layers).
#include <algorithm>
#include <string>

#include "core/io_model.h"

namespace meshplan::io_model {

using io_detail::Reader;

namespace {

// Windowed layers by model class where the config has no `layer_types` list (transformers):
// GptOssConfig's default layer_types: layer i slides when i % 2 == 0; Qwen2/Qwen3: sliding from
// max_window_layers on (default 28, only with use_sliding_window); Mistral, Mixtral, Phi-3, Starcoder2
// and the rest: every layer. Gemma 2 (Gemma2DecoderLayer: is_sliding = not layer_idx % 2) alternates from a
// windowed layer 0; Gemma 3 (Gemma3TextConfig) makes every sliding_window_pattern-th layer global (layer i
// slides when (i + 1) % pattern != 0; default 6; transformers >= 4.53 spells it _sliding_window_pattern).
int64_t windowed_layers_by_type(Reader& r, const YAML::Node& root, const ModelSpec& m) {
  const int64_t L = m.num_layers;
  if (m.model_type == "gpt_oss" || m.model_type == "gemma2") return (L + 1) / 2;
  if (m.model_type == "gemma3_text") {
    const char* key = Reader::has(root, "sliding_window_pattern") ? "sliding_window_pattern" : "_sliding_window_pattern";
    const int64_t pattern = r.integer(root, key, key, int64_t{6}, "every N-th layer attends globally, e.g. 6");
    if (pattern < 1) {
      r.fail(key, std::to_string(pattern), "must be at least 1", "every N-th layer attends globally, e.g. 6");
      return 0;
    }
    return L - L / pattern;
  }
  if (m.model_type.rfind("qwen2", 0) == 0 || m.model_type.rfind("qwen3", 0) == 0) {
    const int64_t full = r.integer(root, "max_window_layers", "max_window_layers", int64_t{28},
                                   "layers below it attend fully");
    return full >= L ? 0 : L - std::max<int64_t>(0, full);
  }
  return L;
}

// `layer_types` (GPT-OSS, recent transformers for Gemma/Qwen): one entry per layer.
int64_t windowed_layers_by_list(Reader& r, const YAML::Node& list, const ModelSpec& m) {
  if (!list.IsSequence() || static_cast<int64_t>(list.size()) != m.num_layers) {
    r.fail("layer_types", io_detail::node_text(list), "must list one type per layer (" + std::to_string(m.num_layers) + ")",
           "sliding_attention or full_attention per layer");
    return 0;
  }
  int64_t windowed = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string t = list[i].IsScalar() ? list[i].as<std::string>() : std::string();
    if (t == "sliding_attention") ++windowed;
    else if (t != "full_attention")
      r.fail("layer_types[" + std::to_string(i) + "]", t, "is an attention type meshplan does not cost",
             "sliding_attention or full_attention");
  }
  return windowed;
}

}  // namespace

void read_sliding_window(Reader& r, const YAML::Node& root, ModelSpec& m) {
  // null (Mistral v0.2+, most configs that carry the key) means no window.
  if (!Reader::has(root, "sliding_window") || root["sliding_window"].IsNull()) return;
  const int64_t w = r.integer(root, "sliding_window", "sliding_window", int64_t{0}, "window in tokens, e.g. 4096");
  if (w <= 0) return;
  if (!r.boolean(root, "use_sliding_window", "use_sliding_window", true, "false: the window is not used")) return;
  int64_t layers = 0;
  if (Reader::has(root, "sliding_window_layers"))  // meshplan's own spelling (plan files)
    layers = r.integer(root, "sliding_window_layers", "sliding_window_layers", int64_t{0}, "layers with the window");
  else if (Reader::has(root, "layer_types"))
    layers = windowed_layers_by_list(r, root["layer_types"], m);
  else
    layers = windowed_layers_by_type(r, root, m);
  if (layers < 0 || layers > m.num_layers)
    r.fail("sliding_window_layers", std::to_string(layers), "must be 0.." + std::to_string(m.num_layers), "");
  m.sliding_window = w;
  m.sliding_window_layers = layers;
}

}  // namespace meshplan::io_model
