// Private to core/io*.cpp: the architecture keys of model files (MoE, MLA, Falcon, Gemma, Qwen) and
// the classification of every other key (read, harmless, or changing the count but not modelled).
#pragma once
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

#include "core/error.h"
#include "core/io_detail.h"
#include "core/model_spec.h"

namespace meshplan::io_model {

/// How meshplan treats a top-level key of a model file.
enum class KeyKind {
  Read,        // read into ModelSpec (or a name/citation)
  Harmless,    // known not to change the parameter count (rope_scaling, torch_dtype, ...)
  Unmodelled,  // changes the parameter count and meshplan does not model it: an error when set
  Unknown,     // none of the above: accepted and ignored, as before issue 11
};
KeyKind classify_key(const std::string& key);

/// The first key of `root` that changes the parameter count in a way meshplan does not model
/// (a nested text_config, mlp_bias: true, ...), or a model_type whose layers differ from every
/// family read here, as an Error naming it; nullopt when there is none.
std::optional<Error> unmodelled_key(const YAML::Node& root, const std::string& model_type,
                                    const std::string& file);

/// tie_word_embeddings when the file does not say: the default of the model class's config in
/// transformers (cited in io_model_keys.cpp); `fallback` for model types not listed.
bool default_tie_word_embeddings(const std::string& model_type, bool fallback);

/// Reads head_dim, QKV/output biases, Qwen3's Q/K norms, Falcon's attention and norm layout, and
/// the MoE and MLA keys into `m` (after the basic shape). Errors go to `r`.
void read_architecture(io_detail::Reader& r, const YAML::Node& root, ModelSpec& m);
/// sliding_window (+ use_sliding_window, layer_types, max_window_layers, or
/// meshplan's sliding_window_layers): io_model_window.cpp.
void read_sliding_window(io_detail::Reader& r, const YAML::Node& root, ModelSpec& m);
/// Llama 4's text decoder (model_type llama4_text: intermediate_size_mlp, interleave_moe_layer_step,
/// moe_layers, the shared expert) and chunked attention (attention_chunk_size with no_rope_layers /
/// layer_types, or meshplan's chunked_attention_layers): io_model_llama4.cpp.
void read_llama4(io_detail::Reader& r, const YAML::Node& root, ModelSpec& m);
/// swiglu_limit, rope_scaling (YaRN) and GPT-OSS's expert biases (io_model_eager.cpp).
void read_eager_extras(io_detail::Reader& r, const YAML::Node& root, ModelSpec& m);

/// True for Falcon configs (model_type falcon and the legacy RefinedWeb / RefinedWebModel).
bool falcon_family(const std::string& model_type);

}  // namespace meshplan::io_model
