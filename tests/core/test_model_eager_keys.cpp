// Model-file keys that only decide a framework's element-wise passes: swiglu_limit, rope_scaling (YaRN)
// and GPT-OSS's expert biases; GptOssConfig's defaults; round trip through the plan file's model JSON.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"

using namespace meshplan;

namespace {
const std::string kBase =
    "hidden_size: 256\nnum_hidden_layers: 12\nnum_attention_heads: 4\nnum_key_value_heads: 2\n"
    "intermediate_size: 512\nvocab_size: 1000\n";
const std::string kExperts = "num_local_experts: 8\nnum_experts_per_tok: 2\n";

Result<ModelSpec> read(const std::string& extra) { return parse_model(kBase + extra, "m.yaml"); }
ModelSpec parse(const std::string& extra) {
  auto r = read(extra);
  INFO((r.ok() ? std::string() : r.error().one_line()));
  REQUIRE(r.ok());
  return r.value();
}
}  // namespace

TEST_CASE("gpt_oss configs default to GptOssConfig's clamp 7, YaRN factor 32 and biased experts") {
  const ModelSpec m = parse("model_type: gpt_oss\n" + kExperts);
  CHECK(m.glu_clamp == 7.0);
  CHECK(m.rope_yarn_factor == 32.0);
  CHECK(m.expert_bias);
  // openai/gpt-oss-120b's config.json spells them out; the values given win.
  const ModelSpec given = parse("model_type: gpt_oss\n" + kExperts +
                                "swiglu_limit: 5.0\nrope_scaling: {rope_type: yarn, factor: 8.0, beta_fast: 32.0}\n");
  CHECK(given.glu_clamp == 5.0);
  CHECK(given.rope_yarn_factor == 8.0);
}

TEST_CASE("other models: no clamp, no YaRN unless rope_scaling says yarn, no expert biases") {
  const ModelSpec llama = parse("model_type: llama\n");
  CHECK(llama.glu_clamp == 0.0);
  CHECK(llama.rope_yarn_factor == 0.0);
  CHECK_FALSE(llama.expert_bias);
  // Llama 3.1's rope_scaling is rope_type llama3: not YaRN.
  CHECK(parse("model_type: llama\nrope_scaling: {rope_type: llama3, factor: 8.0}\n").rope_yarn_factor == 0.0);
  CHECK(parse("model_type: qwen3\nrope_scaling: {type: yarn, factor: 4.0}\n").rope_yarn_factor == 4.0);
  CHECK(parse("model_type: qwen3\nrope_scaling: null\n").rope_yarn_factor == 0.0);
  // DeepSeek-V3: YaRN factor 40 with mscale = mscale_all_dim = 1, so cos and sin are not scaled.
  CHECK(parse("model_type: deepseek_v3\nrope_scaling: {type: yarn, factor: 40, mscale: 1.0, mscale_all_dim: 1.0}\n")
            .rope_yarn_factor == 0.0);
  CHECK(parse("rope_scaling: {rope_type: yarn, factor: 40, mscale: 1.0, mscale_all_dim: 0.5}\n").rope_yarn_factor == 40.0);
  CHECK(parse("rope_scaling: {rope_type: yarn, factor: 40, attention_factor: 1.0}\n").rope_yarn_factor == 0.0);
  CHECK(parse("model_type: mixtral\n" + kExperts).expert_bias == false);
}

TEST_CASE("bad clamp or rope_scaling values name the key") {
  auto neg = read("model_type: gpt_oss\nswiglu_limit: -1\n");
  REQUIRE_FALSE(neg.ok());
  CHECK(neg.error().one_line().find("swiglu_limit") != std::string::npos);
  auto list = read("rope_scaling: [yarn, 32]\n");
  REQUIRE_FALSE(list.ok());
  CHECK(list.error().one_line().find("rope_scaling") != std::string::npos);
  auto small = read("rope_scaling: {rope_type: yarn, factor: 0.5}\n");
  REQUIRE_FALSE(small.ok());
  CHECK(small.error().one_line().find("rope_scaling.factor") != std::string::npos);
}

TEST_CASE("the clamp, YaRN factor and expert biases survive the plan file's model JSON") {
  const ModelSpec m = parse("model_type: gpt_oss\n" + kExperts);
  auto back = parse_model(model_to_json(m), "plan.json");
  REQUIRE(back.ok());
  CHECK(back.value().glu_clamp == 7.0);
  CHECK(back.value().rope_yarn_factor == 32.0);
  CHECK(back.value().expert_bias);
  CHECK(back.value().attention_sinks);
  CHECK(back.value().exact_parameters() == m.exact_parameters());
  const ModelSpec plain = parse("model_type: llama\n");
  auto plain_back = parse_model(model_to_json(plain), "plan.json");
  REQUIRE(plain_back.ok());
  CHECK(plain_back.value().glu_clamp == 0.0);
  CHECK_FALSE(plain_back.value().expert_bias);
}
