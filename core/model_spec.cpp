// Parameter counts and shape validation for ModelSpec.
#include "core/model_spec.h"

#include <string>

#include "core/checked.h"
#include "core/human_format.h"
#include "core/limits.h"
#include "core/model_params.h"

namespace meshplan {

using model_params::CheckedI64;

double ModelSpec::attention_parameters() const { return model_params::attention<double>(*this); }

double ModelSpec::dense_mlp_parameters() const { return model_params::dense_mlp<double>(*this); }

double ModelSpec::expert_parameters() const { return model_params::expert<double>(*this); }

double ModelSpec::moe_replicated_parameters() const { return model_params::moe_replicated<double>(*this); }

// Multiples of f in [0, x] (0 when x < 0).
static int64_t multiples_upto(int64_t x, int64_t f) { return x < 0 ? 0 : x / f + 1; }

// Closed form of counting is_moe_layer(i) over i in [0, L): the i in [first, L) with
// (i + phase) % freq == 0 are the multiples of freq in [first + phase, L - 1 + phase].
// tests/core/test_model_params.cpp compares it with the loop.
int64_t ModelSpec::num_moe_layers() const {
  if (!moe.enabled() || moe.first_dense_layers >= num_layers) return 0;
  const int64_t f = moe.layer_freq > 0 ? moe.layer_freq : 1;
  const int64_t first = moe.first_dense_layers > 0 ? moe.first_dense_layers : 0;
  return multiples_upto(num_layers - 1 + moe.layer_phase, f) - multiples_upto(first + moe.layer_phase - 1, f);
}

double ModelSpec::layer_norm_parameters() const { return model_params::layer_norms<double>(*this); }

double ModelSpec::layer_parameters() const {
  if (num_layers <= 0) return 0.0;
  return attention_parameters() + layer_norm_parameters() +
         model_params::all_mlps<double>(*this) / static_cast<double>(num_layers);
}

double ModelSpec::active_parameters() const { return model_params::active<double>(*this); }

double ModelSpec::embedding_parameters() const { return model_params::embedding<double>(*this); }

double ModelSpec::lm_head_parameters() const {
  return tie_word_embeddings ? 0.0 : static_cast<double>(vocab_size) * hidden_size;
}

double ModelSpec::num_parameters() const { return model_params::total<double>(*this); }

double ModelSpec::mtp_parameters() const {
  return static_cast<double>(mtp_layers) * model_params::mtp_module<double>(*this);
}

double ModelSpec::mtp_layer_parameters() const {
  const double h = static_cast<double>(hidden_size);
  return model_params::mtp_module<double>(*this) - 2.0 * h * h -
         3.0 * static_cast<double>(model_params::per_norm(*this)) * h;
}

std::optional<int64_t> ModelSpec::exact_parameters() const {
  if (num_heads <= 0 || num_kv_heads <= 0) return std::nullopt;
  return model_params::total<CheckedI64>(*this).v;
}

std::optional<int64_t> ModelSpec::exact_active_parameters() const {
  if (num_heads <= 0 || num_kv_heads <= 0) return std::nullopt;
  return model_params::active<CheckedI64>(*this).v;
}

std::string active_parameters_text(const ModelSpec& m) {
  std::string out = m.moe.enabled() ? ", " + human_count(m.active_parameters(), "active") : "";
  if (m.mtp_layers > 0) out += ", + " + human_count(m.mtp_parameters(), "in MTP modules");
  return out;
}

static void require_in(ErrorList& errors, const std::string& file, const char* field, int64_t v,
                       int64_t hi, const char* hint) {
  if (v <= 0 || v > hi)
    errors.push_back(make_error(file, field, std::to_string(v),
                                "must be a positive integer in " + limits::range_text(1, hi), hint));
}

ErrorList validate_model(const ModelSpec& m, const std::string& file) {
  ErrorList e;
  require_in(e, file, "hidden_size", m.hidden_size, limits::kMaxHidden, "the model width, e.g. 4096");
  require_in(e, file, "num_hidden_layers", m.num_layers, limits::kMaxLayers, "the number of transformer blocks");
  require_in(e, file, "num_attention_heads", m.num_heads, limits::kMaxHeads, "e.g. 32");
  require_in(e, file, "num_key_value_heads", m.num_kv_heads, limits::kMaxHeads,
             "omit it for multi-head attention (defaults to num_attention_heads)");
  require_in(e, file, "intermediate_size", m.intermediate_size, limits::kMaxIntermediate,
             "omit it for a 4*hidden MLP");
  require_in(e, file, "vocab_size", m.vocab_size, limits::kMaxVocab, "e.g. 32000");
  limits::check_int(e, file, "max_position_embeddings", m.max_position_embeddings, 0,
                    limits::kMaxPositions, "longest sequence the model supports, e.g. 4096");
  if (!e.empty()) return e;
  validate_model_architecture(m, file, e);
  if (!e.empty()) return e;
  if (m.head_dim_override == 0 && !m.mla.enabled() && m.hidden_size % m.num_heads != 0)
    e.push_back(make_error(file, "num_attention_heads", std::to_string(m.num_heads),
                           "does not divide hidden_size=" + std::to_string(m.hidden_size),
                           "choose heads so that hidden_size/heads is an integer head dimension, or give head_dim"));
  if (m.num_heads % m.num_kv_heads != 0)
    e.push_back(make_error(file, "num_key_value_heads", std::to_string(m.num_kv_heads),
                           "does not divide num_attention_heads=" + std::to_string(m.num_heads),
                           "GQA needs heads to be a multiple of key/value heads"));
  if (!e.empty()) return e;
  const auto params = m.exact_parameters();
  if (!params || *params > limits::kMaxParameters)
    e.push_back(make_error(file, "num_hidden_layers", std::to_string(m.num_layers),
                           "gives more than " + std::to_string(limits::kMaxParameters) +
                               " parameters (accepted 1.." + std::to_string(limits::kMaxParameters) + ")",
                           "check hidden_size, num_hidden_layers and intermediate_size"));
  return e;
}

}  // namespace meshplan
