// Llama 4's text decoder (model_type llama4_text): exact parameter counts of Scout and Maverick from
// their weight shapes, the interleaved MoE layout, chunked attention, and the refusals.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"
#include "hf_configs.h"

using namespace meshplan;


static ModelSpec load(const std::string& file) { return meshplan_test::load_hf_config(file); }

static Error refused(const std::string& text) {
  auto r = parse_model(text, "llama4.yaml");
  REQUIRE_FALSE(r.ok());
  return r.error();
}

// Weight shapes of transformers models/llama4/modeling_llama4.py (h 5120, 40 heads and 8 KV heads of
// 128, vocab 202048): q_proj and o_proj 5120 x 5120, k_proj and v_proj 5120 x 1024, two RMSNorms of
// 5120 per layer; Llama4TextMoe = experts.gate_up_proj [E, 5120, 2 x 8192] + experts.down_proj
// [E, 8192, 5120], router 5120 x E without bias, shared_expert = Llama4TextMLP(8192): 3 x 5120 x 8192;
// a dense layer's Llama4TextMLP(intermediate_size_mlp 16384): 3 x 5120 x 16384; embed_tokens and the
// untied lm_head 202048 x 5120 each, the final norm 5120.
constexpr int64_t kAttention = 2 * 5120 * 5120 + 2 * 5120 * 1024 + 2 * 5120;  // with the two norms
constexpr int64_t kExpert = 3 * int64_t{5120} * 8192;
constexpr int64_t kEnds = 2 * int64_t{202048} * 5120 + 5120;

TEST_CASE("Llama 4 Scout (text): 48 MoE layers of 16 experts + 1 shared, top-1, exact counts") {
  const ModelSpec m = load("llama-4-scout-17b-16e-text.json");
  CHECK(m.model_type == "llama4_text");
  CHECK(m.moe.num_experts == 16);
  CHECK(m.moe.experts_per_token == 1);
  CHECK(m.moe.expert_intermediate_size == 8192);
  CHECK(m.moe.num_shared_experts == 1);
  CHECK(m.moe.shared_expert_intermediate_size == 8192);
  CHECK(m.intermediate_size == 16384);  // intermediate_size_mlp: no dense layer uses it here
  CHECK(m.num_moe_layers() == 48);
  CHECK_FALSE(m.moe.router_bias);
  CHECK_FALSE(m.qk_norm);  // use_qk_norm is Llama4TextL2Norm, which has no weight
  CHECK_FALSE(m.tie_word_embeddings);
  // Chunked attention on the 36 RoPE layers (no_rope_layers: a NoPE layer every 4th).
  CHECK(m.attention_chunk == 8192);
  CHECK(m.chunked_layers == 36);
  const int64_t layer = kAttention + 16 * kExpert + kExpert + 5120 * 16;
  const int64_t active = kAttention + kExpert + kExpert + 5120 * 16;
  // 107,769,861,120 of the 109 B (Meta: "109B total parameters"; the rest is the vision encoder,
  // not counted: the language model is what is planned) and 17.17 B active ("17B active").
  CHECK(48 * layer + kEnds == 107769861120);
  REQUIRE(m.exact_parameters().has_value());
  CHECK(*m.exact_parameters() == 48 * layer + kEnds);
  REQUIRE(m.exact_active_parameters().has_value());
  CHECK(*m.exact_active_parameters() == 48 * active + kEnds);
}

TEST_CASE("Llama 4 Maverick (text): MoE on every other layer (128 experts), dense layers of 16384") {
  const ModelSpec m = load("llama-4-maverick-17b-128e-text.json");
  CHECK(m.moe.num_experts == 128);
  CHECK(m.num_moe_layers() == 24);
  // moe_layers = range(1, 48, 2): layer 0 dense, layer 1 MoE (Megatron's --moe-layer-freq ([0,1]*24)).
  CHECK_FALSE(m.moe.is_moe_layer(0));
  CHECK(m.moe.is_moe_layer(1));
  CHECK(m.moe.is_moe_layer(47));
  CHECK(m.intermediate_size == 16384);
  CHECK(m.chunked_layers == 36);  // no_rope_layers absent: the default interval of 4
  const int64_t dense = kAttention + 3 * int64_t{5120} * 16384;
  const int64_t moe = kAttention + 128 * kExpert + kExpert + 5120 * 128;
  const int64_t moe_active = kAttention + kExpert + kExpert + 5120 * 128;
  CHECK(24 * dense + 24 * moe + kEnds == 400711848960);  // Meta: "400B total parameters"
  REQUIRE(m.exact_parameters().has_value());
  CHECK(*m.exact_parameters() == 24 * dense + 24 * moe + kEnds);
  REQUIRE(m.exact_active_parameters().has_value());
  CHECK(*m.exact_active_parameters() == 24 * dense + 24 * moe_active + kEnds);  // 17.18 B: "17B active"
}

TEST_CASE("Llama 4 keys: layer_types, a null chunk, canonical keys, and what is refused") {
  const std::string head =
      "model_type: llama4_text\nhidden_size: 512\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
      "num_key_value_heads: 2\nintermediate_size: 256\nintermediate_size_mlp: 1024\nvocab_size: 1000\n"
      "num_local_experts: 4\nnum_experts_per_tok: 1\n";
  auto typed = parse_model(head + "layer_types: [chunked_attention, full_attention, chunked_attention, full_attention]\n",
                           "t.yaml");
  REQUIRE(typed.ok());
  CHECK(typed.value().chunked_layers == 2);
  auto none = parse_model(head + "attention_chunk_size: null\n", "t.yaml");
  REQUIRE(none.ok());
  CHECK(none.value().attention_chunk == 0);
  auto stepped = parse_model(head + "interleave_moe_layer_step: 2\nmoe_layers: [1, 3]\n", "t.yaml");
  REQUIRE(stepped.ok());
  CHECK(stepped.value().num_moe_layers() == 2);
  // Other model types: chunked attention only with meshplan's chunked_attention_layers.
  auto own = parse_model("model_type: llama\nhidden_size: 512\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
                         "vocab_size: 1000\nattention_chunk_size: 2048\nchunked_attention_layers: 3\n", "t.yaml");
  REQUIRE(own.ok());
  CHECK(own.value().chunked_layers == 3);
  CHECK(refused("model_type: llama\nhidden_size: 512\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
                "vocab_size: 1000\nattention_chunk_size: 2048\n").field == "attention_chunk_size");
  CHECK(refused("model_type: llama\nhidden_size: 512\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
                "vocab_size: 1000\nintermediate_size_mlp: 2048\n").field == "intermediate_size_mlp");
  // NoPE layers have no weights: no_rope_layers is accepted (and changes nothing) elsewhere.
  auto nope = parse_model("model_type: llama\nhidden_size: 512\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
                          "vocab_size: 1000\nno_rope_layers: [1, 1, 1, 0]\nno_rope_layer_interval: 4\n", "t.yaml");
  REQUIRE(nope.ok());
  CHECK(nope.value().chunked_layers == 0);
  // A moe_layers list that is not every step-th layer; a bad layer type; the multimodal wrapper.
  CHECK(refused(head + "interleave_moe_layer_step: 2\nmoe_layers: [0, 2]\n").field == "moe_layers");
  // use_qk_norm: weightless in Llama 4, a head_dim RMSNorm with weights elsewhere (GLM-4.5), as Qwen3's.
  const std::string llama = "model_type: llama\nhidden_size: 512\nnum_hidden_layers: 4\nnum_attention_heads: 8\n"
                            "vocab_size: 1000\n";
  auto normed = parse_model(llama + "use_qk_norm: true\n", "t.yaml");
  REQUIRE(normed.ok());
  CHECK(normed.value().qk_norm);
  CHECK(*normed.value().exact_parameters() ==
        *parse_model(llama, "t.yaml").value().exact_parameters() + 4 * 2 * 64);
  CHECK(refused(head + "layer_types: [chunked_attention, sliding_attention, full_attention, full_attention]\n")
            .field == "layer_types[1]");
  const Error wrapper = refused("model_type: llama4\ntext_config: {hidden_size: 512}\n");
  CHECK(wrapper.field == "model_type");
  CHECK(wrapper.hint.find("text_config") != std::string::npos);
}

TEST_CASE("Llama 4 configs round-trip through model_to_json") {
  for (const char* file : {"llama-4-scout-17b-16e-text.json", "llama-4-maverick-17b-128e-text.json"}) {
    const ModelSpec m = load(file);
    auto back = parse_model(model_to_json(m), "roundtrip.json");
    INFO(file << ": " << (back.ok() ? "" : back.error().one_line()));
    REQUIRE(back.ok());
    CHECK(back.value().attention_chunk == m.attention_chunk);
    CHECK(back.value().chunked_layers == m.chunked_layers);
    CHECK(back.value().intermediate_size == m.intermediate_size);
    CHECK(back.value().exact_parameters() == m.exact_parameters());
  }
}
