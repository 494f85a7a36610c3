// Tests of model-file loading: Hugging Face / GPT-2 keys, shipped examples, and every bad input.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>

#include "core/io.h"

using namespace meshplan;

static const std::string kModels = std::string(MESHPLAN_SOURCE_DIR) + "/examples/models/";

static Error model_error(const std::string& text) {
  auto r = parse_model(text, "bad.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().file == "bad.yaml");
  CHECK(r.error().one_line().find('\n') == std::string::npos);
  return r.error();
}

static const char* kTiny =
    "hidden_size: 64\nnum_hidden_layers: 4\nnum_attention_heads: 4\nvocab_size: 256\n";

TEST_CASE("Hugging Face keys of a Llama config") {
  auto r = parse_model(
      "model_type: llama\nhidden_act: silu\nhidden_size: 4096\nnum_hidden_layers: 32\n"
      "num_attention_heads: 32\nnum_key_value_heads: 8\nintermediate_size: 14336\n"
      "vocab_size: 128256\nmax_position_embeddings: 8192\nrope_theta: 500000.0\nrope_scaling: null\n",
      "dir/llama-3-8b.yaml");
  REQUIRE(r.ok());
  const ModelSpec& m = r.value();
  CHECK(m.name == "llama-3-8b");  // file stem when no name: key
  CHECK(m.hidden_size == 4096);
  CHECK(m.num_layers == 32);
  CHECK(m.num_heads == 32);
  CHECK(m.num_kv_heads == 8);
  CHECK(m.intermediate_size == 14336);
  CHECK(m.vocab_size == 128256);
  CHECK(m.max_position_embeddings == 8192);
  CHECK(m.mlp == MlpKind::Gated);
  CHECK_FALSE(m.tie_word_embeddings);
  CHECK_FALSE(m.learned_positions);
  CHECK_FALSE(m.biases);
  CHECK(m.num_parameters() == 8030261248.0);  // Meta-Llama-3-8B's published count
}

TEST_CASE("defaults: kv heads = heads, intermediate = 4 hidden, plain MLP without a family") {
  auto r = parse_model(kTiny, "t.yaml");
  REQUIRE(r.ok());
  CHECK(r.value().num_kv_heads == 4);
  CHECK(r.value().intermediate_size == 256);
  CHECK(r.value().mlp == MlpKind::Plain);
}

TEST_CASE("GPT-2 keys imply GPT-2 architecture") {
  auto r = load_model(kModels + "gpt2-124m.json");
  REQUIRE(r.ok());
  const ModelSpec& m = r.value();
  CHECK(m.hidden_size == 768);
  CHECK(m.num_layers == 12);
  CHECK(m.num_heads == 12);
  CHECK(m.intermediate_size == 3072);  // n_inner: null -> 4*n_embd
  CHECK(m.max_position_embeddings == 1024);
  CHECK(m.mlp == MlpKind::Plain);
  CHECK(m.tie_word_embeddings);
  CHECK(m.learned_positions);
  CHECK(m.biases);
  CHECK(m.num_parameters() == 124439808.0);  // Hugging Face GPT2LMHeadModel parameter count
}

TEST_CASE("Llama-2 7B has its published parameter count") {
  auto r = load_model(kModels + "llama-2-7b.yaml");
  REQUIRE(r.ok());
  CHECK(r.value().num_parameters() == 6738415616.0);
  CHECK(r.value().source.find("Llama-2-7b") != std::string::npos);
}

TEST_CASE("explicit mlp and architecture keys override the family defaults") {
  auto r = parse_model(std::string(kTiny) + "model_type: llama\nmlp: plain\nbiases: true\n", "t.yaml");
  REQUIRE(r.ok());
  CHECK(r.value().mlp == MlpKind::Plain);
  CHECK(r.value().biases);
  auto g = parse_model(std::string(kTiny) + "model_type: gpt2\nmlp: gated\ntie_word_embeddings: false\n", "t.yaml");
  REQUIRE(g.ok());
  CHECK(g.value().mlp == MlpKind::Gated);
  CHECK_FALSE(g.value().tie_word_embeddings);
  CHECK(g.value().learned_positions);
}

TEST_CASE("every shipped example model loads, cites a source and round-trips through JSON") {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kModels)) {
    const std::string path = entry.path().string();
    INFO(path);
    auto r = load_model(path);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().source.empty());
    auto back = parse_model(model_to_json(r.value()), "roundtrip.json");
    REQUIRE(back.ok());
    CHECK(model_to_json(back.value()) == model_to_json(r.value()));
    CHECK(back.value().num_parameters() == r.value().num_parameters());
    ++count;
  }
  CHECK(count >= 15);
}

TEST_CASE("Korthikanti et al. models have their Table 3 shapes") {
  auto r = load_model(kModels + "megatron-gpt-530b.yaml");
  REQUIRE(r.ok());
  CHECK(r.value().hidden_size == 20480);
  CHECK(r.value().num_layers == 105);
  CHECK(r.value().num_heads == 128);
  CHECK(r.value().vocab_size == 51200);
  CHECK(r.value().mlp == MlpKind::Plain);
}

TEST_CASE("bad model: missing file") {
  auto r = load_model("/nonexistent/model.yaml");
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().file == "/nonexistent/model.yaml");
  CHECK(r.error().message.find("cannot be read") != std::string::npos);
  CHECK_FALSE(r.error().hint.empty());
}

TEST_CASE("bad model: YAML syntax error names the line") {
  Error e = model_error("hidden_size: 64\nnum_hidden_layers: [4\nnum_attention_heads: 4\n");
  CHECK(e.field.rfind("line ", 0) == 0);
  CHECK(e.message.find("YAML syntax error") != std::string::npos);
}

TEST_CASE("bad model: not a mapping") {
  Error e = model_error("- 1\n- 2\n");
  CHECK(e.message.find("mapping") != std::string::npos);
}

TEST_CASE("bad model: missing required key") {
  Error e = model_error("hidden_size: 64\nnum_attention_heads: 4\nvocab_size: 256\n");
  CHECK(e.field == "num_hidden_layers");
  CHECK(e.message == "missing required key");
  CHECK_FALSE(e.hint.empty());
}

TEST_CASE("bad model: wrong-typed keys") {
  Error e = model_error("hidden_size: sixty\nnum_hidden_layers: 4\nnum_attention_heads: 4\nvocab_size: 256\n");
  CHECK(e.field == "hidden_size");
  CHECK(e.value == "sixty");
  Error f = model_error(std::string(kTiny) + "num_key_value_heads: 2.5\n");
  CHECK(f.field == "num_key_value_heads");
  Error g = model_error(std::string(kTiny) + "intermediate_size: [1, 2]\n");
  CHECK(g.field == "intermediate_size");
  Error h = model_error(std::string(kTiny) + "tie_word_embeddings: maybe\n");
  CHECK(h.field == "tie_word_embeddings");
  Error i = model_error(std::string(kTiny) + "mlp: swirly\n");
  CHECK(i.field == "mlp");
  CHECK(i.value == "swirly");
}

TEST_CASE("bad model: zero and negative sizes") {
  Error e = model_error("hidden_size: 64\nnum_hidden_layers: -4\nnum_attention_heads: 4\nvocab_size: 256\n");
  CHECK(e.field == "num_hidden_layers");
  CHECK(e.value == "-4");
  Error z = model_error("{\"n_embd\": 0, \"n_layer\": 2, \"n_head\": 2, \"vocab_size\": 10}");
  CHECK(z.field == "n_embd");  // named as the file spells it
  CHECK(z.value == "0");
}

TEST_CASE("bad model: heads not dividing hidden") {
  Error e = model_error("hidden_size: 64\nnum_hidden_layers: 4\nnum_attention_heads: 6\nvocab_size: 256\n");
  CHECK(e.field == "num_attention_heads");
  CHECK(e.value == "6");
  CHECK(e.message.find("hidden_size=64") != std::string::npos);
}

TEST_CASE("bad model: GQA groups not dividing heads") {
  Error e = model_error(std::string(kTiny) + "num_key_value_heads: 3\n");
  CHECK(e.field == "num_key_value_heads");
  CHECK(e.value == "3");
}

TEST_CASE("format_json prints shortest round-trip floats, lists of scalars inline") {
  CHECK(format_json("{\"a\": 1.92379, \"b\": [1, 2], \"c\": {}, \"d\": 80.0}") ==
        "{\n  \"a\": 1.92379,\n  \"b\": [1, 2],\n  \"c\": {},\n  \"d\": 80\n}\n");
  CHECK(json_to_yaml("{\"a\": {\"b\": \"1f1b\", \"c\": [{\"x\": 1}]}}") ==
        "a:\n  b: \"1f1b\"\n  c:\n    - x: 1\n");
}

TEST_CASE("dropout: Llama configs train without it, GPT-2 configs with it, an explicit key wins") {
  for (const char* f : {"llama-2-7b.yaml", "llama-2-70b.yaml", "llama-3-8b.yaml", "llama-tiny.yaml",
                        "tinyllama-1.1b.yaml"}) {
    INFO(f);
    auto r = load_model(kModels + f);
    REQUIRE(r.ok());
    CHECK_FALSE(r.value().dropout);
  }
  for (const char* f : {"gpt2-124m.json", "gpt2-tiny.yaml", "gpt3-175b.yaml", "megatron-gpt-22b.yaml",
                        "megatron-gpt-175b.yaml", "megatron-gpt-530b.yaml", "megatron-gpt-1t.yaml"}) {
    INFO(f);
    auto r = load_model(kModels + f);
    REQUIRE(r.ok());
    CHECK(r.value().dropout);
  }
  const std::string tiny(kTiny);
  // Hugging Face Llama config.json: attention_dropout 0.0 and no hidden dropout.
  CHECK_FALSE(parse_model("model_type: llama\nattention_dropout: 0.0\n" + tiny, "a.yaml").value().dropout);
  CHECK_FALSE(parse_model("resid_pdrop: 0.0\nattn_pdrop: 0.0\nembd_pdrop: 0.0\n" + tiny, "a.yaml").value().dropout);
  CHECK(parse_model("resid_pdrop: 0.1\nattn_pdrop: 0.0\n" + tiny, "a.yaml").value().dropout);
  CHECK(parse_model("model_type: llama\nhidden_dropout: 0.1\n" + tiny, "a.yaml").value().dropout);
  CHECK(parse_model(tiny, "a.yaml").value().dropout);  // no family, no keys: Korthikanti's accounting
  CHECK(parse_model("model_type: llama\ndropout: true\nattention_dropout: 0.0\n" + tiny, "a.yaml").value().dropout);
  CHECK_FALSE(parse_model("model_type: gpt2\ndropout: false\nresid_pdrop: 0.1\n" + tiny, "a.yaml").value().dropout);
  // Round trip keeps an explicit choice that the family would not imply.
  auto r = parse_model("dropout: false\n" + tiny, "a.yaml");
  REQUIRE(r.ok());
  CHECK_FALSE(parse_model(model_to_json(r.value()), "b.json").value().dropout);
}

TEST_CASE("bad dropout keys are one-line errors") {
  const std::string tiny(kTiny);
  CHECK(model_error("dropout: maybe\n" + tiny).field == "dropout");
  CHECK(model_error("attention_dropout: 1.5\n" + tiny).field == "attention_dropout");
  CHECK(model_error("resid_pdrop: high\n" + tiny).field == "resid_pdrop");
}
