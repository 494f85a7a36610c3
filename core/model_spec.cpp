// Parameter counts and shape validation for ModelSpec.
#include "core/model_spec.h"

#include <string>

#include "core/checked.h"
#include "core/limits.h"

namespace meshplan {

double ModelSpec::attention_parameters() const {
  const double h = static_cast<double>(hidden_size);
  if (mla.enabled()) {
    // DeepSeek-V2/V3 MLA: Q = (h -> q_lora -> norm -> a*(nope+rope)), KV = (h -> kv_lora + rope,
    // norm on kv_lora -> a*(nope+v)), O = a*v -> h.
    const double a = static_cast<double>(num_heads);
    const double qk_head = static_cast<double>(mla.qk_nope_head_dim + mla.qk_rope_head_dim);
    const double q_lora = static_cast<double>(mla.q_lora_rank);
    const double kv_lora = static_cast<double>(mla.kv_lora_rank);
    const double q = mla.q_lora_rank > 0 ? h * q_lora + q_lora + q_lora * a * qk_head : h * a * qk_head;
    const double kv = h * (kv_lora + mla.qk_rope_head_dim) + kv_lora +
                      kv_lora * a * static_cast<double>(mla.qk_nope_head_dim + mla.v_head_dim);
    const double o = a * static_cast<double>(mla.v_head_dim) * h;
    return q + kv + o;
  }
  const double q_width = static_cast<double>(head_dim()) * num_heads;  // == h unless head_dim is set
  const double kv = static_cast<double>(kv_dim());
  double p = 2.0 * h * q_width + 2.0 * h * kv;  // Q and O are h x (a*d); K and V are h x kv
  if (biases) p += (q_width + 2.0 * kv) /*QKV*/ + h /*O*/;
  else if (qkv_bias) p += q_width + 2.0 * kv;
  return p;
}

double ModelSpec::dense_mlp_parameters() const {
  const double h = static_cast<double>(hidden_size);
  const double f = static_cast<double>(intermediate_size);
  const double mats = mlp == MlpKind::Gated ? 3.0 : 2.0;
  double p = mats * h * f;
  if (biases) p += (mats - 1.0) * f /*up(,gate)*/ + h /*down*/;
  return p;
}

double ModelSpec::expert_parameters() const {
  if (!moe.enabled()) return 0.0;
  const double mats = mlp == MlpKind::Gated ? 3.0 : 2.0;
  return mats * static_cast<double>(hidden_size) * static_cast<double>(moe.expert_intermediate_size);
}

double ModelSpec::moe_replicated_parameters() const {
  if (!moe.enabled()) return 0.0;
  const double mats = mlp == MlpKind::Gated ? 3.0 : 2.0;
  const double h = static_cast<double>(hidden_size);
  const double shared = static_cast<double>(moe.num_shared_experts) * mats * h *
                        static_cast<double>(moe.shared_expert_intermediate_size);
  const double router = h * static_cast<double>(moe.num_experts) + (moe.router_bias ? moe.num_experts : 0);
  return shared + router;
}

int64_t ModelSpec::num_moe_layers() const {
  if (!moe.enabled()) return 0;
  int64_t n = 0;
  for (int64_t i = moe.first_dense_layers; i < num_layers; i += moe.layer_freq > 0 ? moe.layer_freq : 1) ++n;
  return n;
}

double ModelSpec::layer_norm_parameters() const {
  return (biases ? 4.0 : 2.0) * static_cast<double>(hidden_size);  // LayerNorm: gain + bias
}

double ModelSpec::layer_parameters() const {
  if (num_layers <= 0) return 0.0;
  const double moe_layers = static_cast<double>(num_moe_layers());
  const double dense_layers = static_cast<double>(num_layers) - moe_layers;
  const double moe_mlp = static_cast<double>(moe.num_experts) * expert_parameters() + moe_replicated_parameters();
  const double mlp_total = dense_layers * dense_mlp_parameters() + moe_layers * moe_mlp;
  return attention_parameters() + layer_norm_parameters() + mlp_total / static_cast<double>(num_layers);
}

double ModelSpec::active_parameters() const {
  if (!moe.enabled()) return num_parameters();
  const double unused_experts = static_cast<double>(moe.num_experts - moe.experts_per_token);
  return num_parameters() - static_cast<double>(num_moe_layers()) * unused_experts * expert_parameters();
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

static void require_in(ErrorList& errors, const std::string& file, const char* field, int64_t v,
                       int64_t hi, const char* hint) {
  if (v <= 0 || v > hi)
    errors.push_back(make_error(file, field, std::to_string(v),
                                "must be a positive integer in " + limits::range_text(1, hi), hint));
}

std::optional<int64_t> ModelSpec::exact_parameters() const {
  if (num_heads <= 0 || num_kv_heads <= 0) return std::nullopt;
  const int64_t h = hidden_size, kv = kv_dim(), f = intermediate_size;
  const int64_t mats = mlp == MlpKind::Gated ? 3 : 2;
  // The terms of layer_parameters() etc. in int64; every product and sum is checked.
  std::optional<int64_t> total = 0;
  auto add = [&](std::optional<int64_t> term) {
    total = total && term ? checked_add(*total, *term) : std::nullopt;
  };
  std::optional<int64_t> layer = 0;
  auto add_layer = [&](std::optional<int64_t> term) {
    layer = layer && term ? checked_add(*layer, *term) : std::nullopt;
  };
  add_layer(checked_product({2, h, h}));        // Q and O
  add_layer(checked_product({2, h, kv}));       // K and V
  add_layer(checked_product({mats, h, f}));     // MLP
  add_layer(checked_mul(biases ? 4 : 2, h));    // norms
  if (biases) {
    add_layer(checked_product({3, h}));
    add_layer(checked_product({2, kv}));
    add_layer(checked_product({mats - 1, f}));
  }
  add(layer ? checked_mul(num_layers, *layer) : std::nullopt);
  add(checked_mul(vocab_size, h));
  if (learned_positions) add(checked_mul(max_position_embeddings, h));
  add(checked_mul(biases ? 2 : 1, h));
  if (!tie_word_embeddings) add(checked_mul(vocab_size, h));
  return total;
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
  if (m.hidden_size % m.num_heads != 0)
    e.push_back(make_error(file, "num_attention_heads", std::to_string(m.num_heads),
                           "does not divide hidden_size=" + std::to_string(m.hidden_size),
                           "choose heads so that hidden_size/heads is an integer head dimension"));
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
