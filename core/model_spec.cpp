// Parameter counts and shape validation for ModelSpec.
#include "core/model_spec.h"

#include <string>

namespace meshplan {

double ModelSpec::layer_parameters() const {
  const double h = static_cast<double>(hidden_size);
  const double kv = static_cast<double>(kv_dim());
  const double f = static_cast<double>(intermediate_size);
  const double mlp_matrices = mlp == MlpKind::Gated ? 3.0 : 2.0;
  const double attention = 2.0 * h * h + 2.0 * h * kv;  // Q and O are h x h; K and V are h x kv
  const double mlp_weights = mlp_matrices * h * f;
  const double norms = (biases ? 4.0 : 2.0) * h;       // LayerNorm: gain + bias; RMSNorm: gain
  double bias = 0.0;
  if (biases) bias = (h + 2.0 * kv) /*QKV*/ + h /*O*/ + (mlp_matrices - 1.0) * f /*up(,gate)*/ + h;
  return attention + mlp_weights + norms + bias;
}

double ModelSpec::embedding_parameters() const {
  double p = static_cast<double>(vocab_size) * static_cast<double>(hidden_size);
  if (learned_positions) p += static_cast<double>(max_position_embeddings) * hidden_size;
  return p;
}

double ModelSpec::lm_head_parameters() const {
  return tie_word_embeddings ? 0.0 : static_cast<double>(vocab_size) * hidden_size;
}

double ModelSpec::num_parameters() const {
  const double final_norm = (biases ? 2.0 : 1.0) * hidden_size;
  return embedding_parameters() + num_layers * layer_parameters() + final_norm +
         lm_head_parameters();
}

static void require_positive(ErrorList& errors, const std::string& file, const char* field,
                             int64_t v, const char* hint) {
  if (v <= 0)
    errors.push_back(make_error(file, field, std::to_string(v), "must be a positive integer", hint));
}

ErrorList validate_model(const ModelSpec& m, const std::string& file) {
  ErrorList e;
  require_positive(e, file, "hidden_size", m.hidden_size, "the model width, e.g. 4096");
  require_positive(e, file, "num_hidden_layers", m.num_layers, "the number of transformer blocks");
  require_positive(e, file, "num_attention_heads", m.num_heads, "e.g. 32");
  require_positive(e, file, "num_key_value_heads", m.num_kv_heads,
                   "omit it for multi-head attention (defaults to num_attention_heads)");
  require_positive(e, file, "intermediate_size", m.intermediate_size,
                   "omit it for a 4*hidden MLP");
  require_positive(e, file, "vocab_size", m.vocab_size, "e.g. 32000");
  if (!e.empty()) return e;
  if (m.hidden_size % m.num_heads != 0)
    e.push_back(make_error(file, "num_attention_heads", std::to_string(m.num_heads),
                           "does not divide hidden_size=" + std::to_string(m.hidden_size),
                           "choose heads so that hidden_size/heads is an integer head dimension"));
  if (m.num_heads % m.num_kv_heads != 0)
    e.push_back(make_error(file, "num_key_value_heads", std::to_string(m.num_kv_heads),
                           "does not divide num_attention_heads=" + std::to_string(m.num_heads),
                           "GQA needs heads to be a multiple of key/value heads"));
  return e;
}

}  // namespace meshplan
