// Gemma 2 and Gemma 3 (text) model files: four norms per layer, Q/K norms (Gemma 3), tied embeddings, the
// windowed layers, exact parameter counts from the weight shapes; Gemma 3's multimodal wrapper refused.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"

using namespace meshplan;

namespace {

ModelSpec parse_ok(const std::string& text, const std::string& file) {
  auto r = parse_model(text, file);
  INFO(file << ": " << (r.ok() ? "" : r.error().one_line()));
  REQUIRE(r.ok());
  return r.value();
}

// The shape keys of the Hub's google/gemma-2-<size> config.json files (Gemma2Config), with their softcapping
// and window keys (which change no weight).
std::string gemma2(int h, int layers, int heads, int kv, int head_dim, int f) {
  return "{architectures: [Gemma2ForCausalLM], model_type: gemma2, attention_bias: false, attention_dropout: 0.0, "
         "attn_logit_softcapping: 50.0, final_logit_softcapping: 30.0, cache_implementation: hybrid, "
         "hidden_act: gelu_pytorch_tanh, hidden_activation: gelu_pytorch_tanh, head_dim: " +
         std::to_string(head_dim) + ", hidden_size: " + std::to_string(h) +
         ", intermediate_size: " + std::to_string(f) + ", max_position_embeddings: 8192, num_attention_heads: " +
         std::to_string(heads) + ", num_hidden_layers: " + std::to_string(layers) +
         ", num_key_value_heads: " + std::to_string(kv) +
         ", query_pre_attn_scalar: 256, rms_norm_eps: 1.0e-06, rope_theta: 10000.0, sliding_window: 4096, "
         "vocab_size: 256000}";
}

}  // namespace

TEST_CASE("Gemma 2: four norms per layer, GeGLU, tied embedding, every other layer windowed") {
  // Gemma2DecoderLayer (transformers models/gemma2/modeling_gemma2.py): input_layernorm,
  // post_attention_layernorm, pre_feedforward_layernorm, post_feedforward_layernorm, each RMSNorm(h); q/k/v/o
  // without biases; gate/up/down; the LM head tied to the embedding (Gemma2Config tie_word_embeddings=True).
  // 9B: embedding 256000 x 3584 = 917,504,000; per layer q 3584 x 4096, k and v 3584 x 2048, o 4096 x 3584
  // (58,720,256), MLP 3 x 3584 x 14336 (154,140,672), norms 4 x 3584: 198,195,200 x 42 = 8,324,198,400; final
  // norm 3,584: 9,241,705,984, the safetensors total of google/gemma-2-9b.
  const ModelSpec m9 = parse_ok(gemma2(3584, 42, 16, 8, 256, 14336), "gemma-2-9b.json");
  CHECK(m9.norms_per_layer == 4);
  CHECK(m9.extra_norms_per_layer() == 2);  // the post-norms the cost model charges
  CHECK(m9.mlp == MlpKind::Gated);
  CHECK(m9.tie_word_embeddings);
  CHECK_FALSE(m9.qk_norm);
  CHECK(m9.exact_parameters() == 9241705984);
  // Gemma2DecoderLayer: is_sliding = not bool(layer_idx % 2): layers 0, 2, ..., 40.
  CHECK(m9.sliding_window == 4096);
  CHECK(m9.sliding_window_layers == 21);
  // 2B (26 layers of 2304, 8 heads of 256 over 4 KV heads, MLP 9216) and 27B (46 of 4608, 32 heads of 128
  // over 16, MLP 36864), the same shapes: 2,614,341,888 and 27,227,128,320.
  CHECK(parse_ok(gemma2(2304, 26, 8, 4, 256, 9216), "gemma-2-2b.json").exact_parameters() == 2614341888);
  CHECK(parse_ok(gemma2(4608, 46, 32, 16, 128, 36864), "gemma-2-27b.json").exact_parameters() == 27227128320);
}

TEST_CASE("Gemma 3 text: Q/K norms of head_dim, four norms, five local layers to one global") {
  // google/gemma-3-1b-pt config.json (Gemma3TextConfig) shape keys. Gemma3Attention adds q_norm and k_norm,
  // RMSNorm(head_dim). Per layer: q 1152 x 1024, k and v 1152 x 256, o 1024 x 1152 (2,949,120), MLP
  // 3 x 1152 x 6912 (23,887,872), norms 4 x 1152 and 2 x 256: 26,842,112 x 26 = 697,894,912; the tied
  // embedding 262144 x 1152 = 301,989,888; final norm 1,152: 999,885,952.
  const ModelSpec m = parse_ok(
      "{architectures: [Gemma3ForCausalLM], model_type: gemma3_text, attention_bias: false, attention_dropout: 0.0, "
      "attn_logit_softcapping: null, cache_implementation: hybrid, final_logit_softcapping: null, head_dim: 256, "
      "hidden_activation: gelu_pytorch_tanh, hidden_size: 1152, intermediate_size: 6912, "
      "max_position_embeddings: 32768, num_attention_heads: 4, num_hidden_layers: 26, num_key_value_heads: 1, "
      "query_pre_attn_scalar: 256, rms_norm_eps: 1.0e-06, rope_local_base_freq: 10000, rope_scaling: null, "
      "rope_theta: 1000000, sliding_window: 512, sliding_window_pattern: 6, vocab_size: 262144}",
      "gemma-3-1b.json");
  CHECK(m.norms_per_layer == 4);
  CHECK(m.qk_norm);
  CHECK(m.tie_word_embeddings);
  CHECK(m.exact_parameters() == 999885952);
  // Layer i is global when (i + 1) % 6 == 0: 4 of 26 (5, 11, 17, 23).
  CHECK(m.sliding_window == 512);
  CHECK(m.sliding_window_layers == 22);
  // transformers >= 4.53 writes the pattern as _sliding_window_pattern, and newer files list layer_types.
  const ModelSpec under = parse_ok(
      "{model_type: gemma3_text, head_dim: 256, hidden_size: 1152, intermediate_size: 6912, num_attention_heads: 4, "
      "num_hidden_layers: 26, num_key_value_heads: 1, sliding_window: 512, _sliding_window_pattern: 2, "
      "vocab_size: 262144}",
      "gemma-3-pattern2.json");
  CHECK(under.sliding_window_layers == 13);
  CHECK(under.exact_parameters() == 999885952);
}

TEST_CASE("Gemma 3's multimodal wrapper is refused with the text_config hint") {
  auto r = parse_model("{model_type: gemma3, text_config: {hidden_size: 2560}, vision_config: {hidden_size: 1152}}",
                       "gemma-3-4b-it.json");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "model_type");
  CHECK(r.error().hint.find("text_config") != std::string::npos);
}

TEST_CASE("norms_per_layer lies in 1..4") {
  const std::string base =
      "{hidden_size: 64, num_hidden_layers: 2, num_attention_heads: 4, vocab_size: 256, norms_per_layer: ";
  CHECK(parse_model(base + "4}", "four.yaml").ok());
  CHECK(parse_ok(base + "1}", "one.yaml").extra_norms_per_layer() == 0);
  CHECK(parse_ok(base + "3}", "three.yaml").extra_norms_per_layer() == 1);
  CHECK_FALSE(parse_model(base + "5}", "five.yaml").ok());
  CHECK_FALSE(parse_model(base + "0}", "zero.yaml").ok());
}
