// Parameter counts of every architecture: double path vs exact int64 path, MoE layer count closed
// form vs the per-layer loop, by-hand counts, and the model-file errors of the architecture keys.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"
#include "core/model_spec.h"

using namespace meshplan;

static ModelSpec dense_base() {
  ModelSpec m;
  m.hidden_size = 512;
  m.num_layers = 6;
  m.num_heads = 8;
  m.num_kv_heads = 2;
  m.intermediate_size = 1536;
  m.vocab_size = 1000;
  return m;
}

// Every combination of the architecture switches on small shapes: the double formulas equal the
// exact checked-int64 ones (all counts here are far below 2^53, so doubles are exact).
TEST_CASE("model params: the double path equals the exact path for every architecture") {
  int checked = 0;
  for (int mask = 0; mask < (1 << 9); ++mask) {
    ModelSpec m = dense_base();
    m.mlp = (mask & 1) ? MlpKind::Plain : MlpKind::Gated;
    m.tie_word_embeddings = mask & 2;
    m.qkv_bias = mask & 4;
    m.o_bias = mask & 4;
    m.qk_norm = mask & 8;
    m.norm_bias = mask & 16;
    m.norms_per_layer = (mask & 16) ? 1 : 2;
    m.head_dim_override = (mask & 32) ? 96 : 0;
    if (mask & 64) {
      m.moe.num_experts = 16;
      m.moe.experts_per_token = 4;
      m.moe.expert_intermediate_size = 384;
      m.moe.num_shared_experts = 2;
      m.moe.shared_expert_intermediate_size = 256;
      m.moe.first_dense_layers = 1;
      m.moe.layer_freq = 2;
      m.moe.layer_phase = (mask & 2) ? 1 : 0;
      m.moe.router_bias = mask & 4;
      m.moe.shared_expert_gate = mask & 8;
    }
    if (mask & 128) {
      m.mla = MlaSpec{(mask & 256) ? 0 : 192, 128, 32, 64, 64};
      m.num_kv_heads = m.num_heads;
    }
    if (mask & 256) {
      m.biases = !m.moe.enabled();  // GPT-2-style biases (refused with MoE)
      m.learned_positions = true;
      m.max_position_embeddings = 2048;
    }
    INFO("mask " << mask);
    REQUIRE(validate_model(m, "t").empty());
    REQUIRE(m.exact_parameters().has_value());
    REQUIRE(m.exact_active_parameters().has_value());
    CHECK(m.num_parameters() == static_cast<double>(*m.exact_parameters()));
    CHECK(m.active_parameters() == static_cast<double>(*m.exact_active_parameters()));
    // The per-layer API adds up to the total: L x mean layer + embedding + final norm + head.
    const double final_norm = (m.biases || m.norm_bias ? 2.0 : 1.0) * m.hidden_size;
    CHECK(m.num_layers * m.layer_parameters() + m.embedding_parameters() + final_norm + m.lm_head_parameters() ==
          Approx(m.num_parameters()).epsilon(1e-12));
    ++checked;
  }
  CHECK(checked == 512);
}

TEST_CASE("model params: MoE layer count closed form equals the per-layer loop") {
  ModelSpec m = dense_base();
  m.moe.num_experts = 4;
  m.moe.experts_per_token = 1;
  m.moe.expert_intermediate_size = 64;
  for (int64_t layers = 1; layers <= 40; ++layers)
    for (int64_t first = 0; first < layers; ++first)
      for (int64_t freq = 1; freq <= 5; ++freq)
        for (int64_t phase = 0; phase <= 1; ++phase) {
          m.num_layers = layers;
          m.moe.first_dense_layers = first;
          m.moe.layer_freq = freq;
          m.moe.layer_phase = phase;
          int64_t loop = 0;
          for (int64_t i = 0; i < layers; ++i) loop += m.moe.is_moe_layer(i) ? 1 : 0;
          INFO(layers << " layers, first " << first << ", freq " << freq << ", phase " << phase);
          REQUIRE(m.num_moe_layers() == loop);
        }
}

TEST_CASE("model params: a small MoE counted by hand") {
  // h=64, L=4, a=4, g=4, f=128 (dense), V=100, gated, untied; MoE from layer 1, every layer,
  // E=4 experts of width 32, top-1, one shared expert of 48, router bias.
  const auto r = parse_model(
      "model_type: deepseek_v3\nhidden_size: 64\nnum_hidden_layers: 4\nnum_attention_heads: 4\n"
      "intermediate_size: 128\nvocab_size: 100\nn_routed_experts: 4\nnum_experts_per_tok: 1\n"
      "moe_intermediate_size: 32\nn_shared_experts: 1\nshared_expert_intermediate_size: 48\n"
      "first_k_dense_replace: 1\ntopk_method: noaux_tc\n",
      "moe.yaml");
  REQUIRE(r.ok());
  const ModelSpec& m = r.value();
  const int64_t attn = 4 * 64 * 64, norms = 2 * 64, dense = 3 * 64 * 128;
  const int64_t expert = 3 * 64 * 32, shared = 3 * 64 * 48, router = 64 * 4 + 4;
  const int64_t total = 100 * 64 * 2 + 64 + 4 * (attn + norms) + dense + 3 * (4 * expert + shared + router);
  CHECK(*m.exact_parameters() == total);
  CHECK(*m.exact_active_parameters() == total - 3 * 3 * expert);
  CHECK(m.expert_parameters() == expert);
  CHECK(m.moe_replicated_parameters() == shared + router);
  CHECK(m.dense_mlp_parameters() == dense);
  CHECK(m.attention_parameters() == attn);
  CHECK(m.num_moe_layers() == 3);
}

static Error model_error(const std::string& text) {
  auto r = parse_model(text, "bad.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().one_line().find('\n') == std::string::npos);
  return r.error();
}

static const std::string kBase =
    "hidden_size: 64\nnum_hidden_layers: 4\nnum_attention_heads: 4\nvocab_size: 100\n";

TEST_CASE("model files: keys that change the count and are not modelled are errors naming them") {
  CHECK(model_error(kBase + "text_config: {hidden_size: 64}\n").field == "text_config");
  CHECK(model_error(kBase + "mlp_bias: true\n").field == "mlp_bias");
  CHECK(model_error(kBase + "interleave_moe_layer_step: 2\n").field == "interleave_moe_layer_step");
  CHECK(model_error(kBase + "model_type: olmo2\n").field == "model_type");
  CHECK(model_error(kBase + "model_type: gemma3\n").field == "model_type");
  CHECK(model_error(kBase + "model_type: llama4\n").field == "model_type");
  CHECK(model_error(kBase + "num_experts: 8\nnum_experts_per_tok: 2\nmlp_only_layers: [1]\n").field ==
        "mlp_only_layers");
  // Harmless and unknown keys are still accepted; null/false/empty "unmodelled" keys are too.
  CHECK(parse_model(kBase + "rope_scaling: {factor: 8}\ntorch_dtype: bfloat16\nfoo_bar: 3\n", "ok.yaml").ok());
  CHECK(parse_model(kBase + "mlp_bias: false\nvision_config: null\nmlp_only_layers: []\n", "ok.yaml").ok());
}

TEST_CASE("model files: MoE and MLA fields outside their ranges name the key and range") {
  const std::string moe = kBase + "num_local_experts: 8\nintermediate_size: 128\n";
  const Error missing = model_error(moe);
  CHECK(missing.field == "num_experts_per_tok");
  const Error too_many = model_error(moe + "num_experts_per_tok: 9\n");
  CHECK(too_many.field == "num_experts_per_tok");
  CHECK(too_many.message.find("1..8") != std::string::npos);
  CHECK(model_error(moe + "num_experts_per_tok: 2\nfirst_k_dense_replace: 4\n").field == "first_k_dense_replace");
  CHECK(model_error(moe + "num_experts_per_tok: 2\nmoe_layer_freq: 0\n").field == "moe_layer_freq");
  CHECK(model_error(moe + "num_experts_per_tok: 2\nbiases: true\n").field == "biases");
  CHECK(model_error(kBase + "head_dim: -1\n").field == "head_dim");
  CHECK(model_error(kBase + "kv_lora_rank: 16\nqk_rope_head_dim: 8\nqk_nope_head_dim: 8\n").field == "v_head_dim");
  CHECK(model_error(kBase + "kv_lora_rank: 16\nqk_rope_head_dim: 0\nqk_nope_head_dim: 8\nv_head_dim: 8\n").field ==
        "qk_rope_head_dim");
  CHECK(model_error(kBase + "model_type: deepseek_v3\nattention_bias: true\nkv_lora_rank: 16\n"
                            "qk_rope_head_dim: 8\nqk_nope_head_dim: 8\nv_head_dim: 8\n").field == "attention_bias");
  // head_dim lifts the heads-divide-hidden rule (Gemma-7B: 3072 / 16 = 192, head_dim 256).
  CHECK(parse_model("hidden_size: 60\nnum_hidden_layers: 2\nnum_attention_heads: 8\nvocab_size: 10\nhead_dim: 16\n",
                    "ok.yaml").ok());
  CHECK(model_error("hidden_size: 60\nnum_hidden_layers: 2\nnum_attention_heads: 8\nvocab_size: 10\n").field ==
        "num_attention_heads");
}

TEST_CASE("model files: tie_word_embeddings follows the model class default when absent") {
  auto tied = [](const std::string& type) {
    auto r = parse_model(kBase + "model_type: " + type + "\n", "t.yaml");
    REQUIRE(r.ok());
    return r.value().tie_word_embeddings;
  };
  CHECK_FALSE(tied("llama"));
  CHECK_FALSE(tied("mistral"));
  CHECK_FALSE(tied("mixtral"));
  CHECK_FALSE(tied("qwen2"));
  CHECK_FALSE(tied("deepseek_v3"));
  CHECK(tied("gemma"));
  CHECK(tied("falcon"));
  CHECK(tied("gpt2"));
  auto r = parse_model(kBase + "model_type: gemma\ntie_word_embeddings: false\n", "t.yaml");
  REQUIRE(r.ok());
  CHECK_FALSE(r.value().tie_word_embeddings);  // an explicit key wins
}

TEST_CASE("model files: attention_bias puts biases on Q, K, V and O (Llama)") {
  auto r = parse_model(kBase + "model_type: llama\nattention_bias: true\n", "t.yaml");
  REQUIRE(r.ok());
  CHECK(r.value().qkv_bias);
  CHECK(r.value().o_bias);
  auto plain = parse_model(kBase + "model_type: llama\n", "t.yaml");
  REQUIRE(plain.ok());
  CHECK(r.value().num_parameters() - plain.value().num_parameters() == 4 * (3 * 64 + 64));
}
