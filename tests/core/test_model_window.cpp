// Sliding-window keys of model files: the window and how many layers use it, per model class, from
// layer_types, or off (null window, use_sliding_window false); plan-file round trip; bad layer types.
#include <catch2/catch.hpp>

#include <string>

#include "core/io.h"

using namespace meshplan;

namespace {
const std::string kBase =
    "hidden_size: 256\nnum_hidden_layers: 12\nnum_attention_heads: 4\nnum_key_value_heads: 2\n"
    "intermediate_size: 512\nvocab_size: 1000\n";

ModelSpec parse(const std::string& extra) {
  auto r = parse_model(kBase + extra, "m.yaml");
  INFO((r.ok() ? std::string() : r.error().one_line()));
  REQUIRE(r.ok());
  return r.value();
}
}  // namespace

TEST_CASE("sliding windows: which layers use them, by model class") {
  // Mistral (and every class without a rule): all layers.
  ModelSpec mistral = parse("model_type: mistral\nsliding_window: 4096\n");
  CHECK(mistral.sliding_window == 4096);
  CHECK(mistral.sliding_window_layers == 12);
  // GPT-OSS: layers 0, 2, 4, ... (GptOssConfig's default layer_types).
  CHECK(parse("model_type: gpt_oss\nsliding_window: 128\n").sliding_window_layers == 6);
  // Qwen2 only with use_sliding_window, from max_window_layers on.
  CHECK(parse("model_type: qwen2\nsliding_window: 4096\nuse_sliding_window: false\n").sliding_window == 0);
  CHECK(parse("model_type: qwen2\nsliding_window: 4096\nuse_sliding_window: true\nmax_window_layers: 8\n")
            .sliding_window_layers == 4);
  // null (Mistral v0.2+, Mixtral) and absent: no window.
  CHECK(parse("model_type: mistral\nsliding_window: null\n").sliding_window == 0);
  CHECK(parse("model_type: llama\n").sliding_window == 0);
}

TEST_CASE("sliding windows: layer_types lists, meshplan's own count and the plan-file round trip") {
  std::string types = "layer_types: [";
  for (int i = 0; i < 12; ++i) types += std::string(i ? ", " : "") + (i % 3 == 0 ? "full_attention" : "sliding_attention");
  types += "]\n";
  ModelSpec listed = parse("model_type: gpt_oss\nsliding_window: 128\n" + types);
  CHECK(listed.sliding_window_layers == 8);
  ModelSpec own = parse("sliding_window: 256\nsliding_window_layers: 5\n");
  CHECK(own.sliding_window_layers == 5);
  auto back = parse_model(model_to_json(listed), "roundtrip.json");
  REQUIRE(back.ok());
  CHECK(back.value().sliding_window == 128);
  CHECK(back.value().sliding_window_layers == 8);
}

TEST_CASE("sliding windows: a layer type meshplan does not cost, or a list of the wrong length, is an error") {
  auto bad = parse_model(kBase + "sliding_window: 128\nlayer_types: [chunked_attention" +
                             std::string(11, ' ') + "]\n", "bad.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field.rfind("layer_types", 0) == 0);
  auto short_list = parse_model(kBase + "sliding_window: 128\nlayer_types: [sliding_attention, full_attention]\n", "s.yaml");
  REQUIRE_FALSE(short_list.ok());
  CHECK(short_list.error().field == "layer_types");
}
