// Model-file keys that decide which element-wise passes a framework runs around the GEMMs: the clamped
// GLU (swiglu_limit), YaRN RoPE scaling (rope_scaling) and GPT-OSS's expert biases.
#include <cmath>
#include <string>

#include "core/io_model.h"

namespace meshplan::io_model {

using io_detail::Reader;

namespace {

// transformers GptOssConfig defaults (models/gpt_oss/configuration_gpt_oss.py): swiglu_limit=7.0,
// rope_scaling={"rope_type": "yarn", "factor": 32.0, ...}; GptOssExperts always holds gate_up_proj_bias
// and down_proj_bias, GptOssAttention its sinks [num_heads], GptOssTopKRouter a bias [E]
// (modeling_gpt_oss.py). openai/gpt-oss-120b's config.json states the same values.
constexpr double kGptOssSwigluLimit = 7.0;
constexpr double kGptOssYarnFactor = 32.0;

// YaRN's scale of cos and sin: transformers' _compute_yarn_parameters and Megatron-Core's
// YarnRotaryEmbedding: attention_factor when given, else get(F, mscale) / get(F, mscale_all_dim) when
// both are given (DeepSeek-V2/V3: equal, so 1), else get(F, 1) = 0.1 ln F + 1 (GPT-OSS: 1.347), with
// get(F, m) = 0.1 m ln F + 1.
double yarn_mscale(Reader& r, const YAML::Node& rs, double f) {
  auto get = [&](double m) { return 0.1 * m * std::log(f) + 1.0; };
  if (Reader::has(rs, "attention_factor"))
    return r.number(rs, "attention_factor", "rope_scaling.attention_factor", 1.0, "YaRN attention scale");
  if (Reader::has(rs, "mscale") && Reader::has(rs, "mscale_all_dim"))
    return get(r.number(rs, "mscale", "rope_scaling.mscale", 1.0, "")) /
           get(r.number(rs, "mscale_all_dim", "rope_scaling.mscale_all_dim", 1.0, ""));
  return get(1.0);
}

// rope_scaling: {rope_type|type: yarn, factor: F}, recorded only when it scales RoPE (mscale != 1, which
// Megatron-Core cannot fuse); other types (linear, dynamic, llama3) leave 0.
double yarn_factor(Reader& r, const YAML::Node& root, double fallback) {
  if (!Reader::has(root, "rope_scaling")) return fallback;
  const YAML::Node rs = root["rope_scaling"];
  if (rs.IsNull()) return 0.0;
  if (!rs.IsMap()) {
    r.fail("rope_scaling", io_detail::node_text(rs), "must be a map", "e.g. {rope_type: yarn, factor: 32}");
    return 0.0;
  }
  const std::string key = Reader::has(rs, "rope_type") ? "rope_type" : "type";
  const std::string type = r.text(rs, key, "rope_scaling." + key, std::string(), "e.g. yarn, linear, llama3");
  if (type != "yarn") return 0.0;
  const double f = r.number(rs, "factor", "rope_scaling.factor", 1.0, "YaRN context extension factor, e.g. 32");
  if (f < 1.0) r.fail("rope_scaling.factor", std::to_string(f), "must be >= 1", "");
  return f > 1.0 && yarn_mscale(r, rs, f) != 1.0 ? f : 0.0;
}

}  // namespace

void read_eager_extras(Reader& r, const YAML::Node& root, ModelSpec& m) {
  const bool gpt_oss = m.model_type == "gpt_oss";
  m.glu_clamp = r.number(root, "swiglu_limit", "swiglu_limit", gpt_oss ? kGptOssSwigluLimit : 0.0,
                         "clamp of the gated MLP's inputs, e.g. 7.0; 0 for none");
  if (m.glu_clamp < 0) r.fail("swiglu_limit", std::to_string(m.glu_clamp), "must be >= 0", "0 for no clamp");
  m.expert_bias = r.boolean(root, "expert_bias", "expert_bias", gpt_oss && m.moe.enabled(),
                            "true when the routed experts carry biases (GPT-OSS)");
  m.rope_yarn_factor = yarn_factor(r, root, gpt_oss ? kGptOssYarnFactor : 0.0);
  m.attention_sinks = r.boolean(root, "attention_sinks", "attention_sinks", gpt_oss,
                                "true when each head has a learned sink logit (GPT-OSS)");
}

}  // namespace meshplan::io_model
