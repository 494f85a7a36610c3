// Validation runs and estimates costed with their cuDNN release's attention curve (core/attention_library.h).
#include <catch2/catch.hpp>

#include "core/io.h"
#include "costmodel/validate.h"

using namespace meshplan;

namespace {
const std::string kSource = MESHPLAN_SOURCE_DIR;

// Seconds of one GB200 run of Qwen3-30B-A3B-like attention under `version` ("" = not given).
double gb200_seconds(const std::string& version) {
  const std::string text =
      "hardware: gb200-nvl72\nframework: megatron\n" +
      std::string(version.empty() ? "" : "cudnn_version: " + version + "\n") +
      "models:\n"
      "  m: {model_type: llama, hidden_size: 2048, num_hidden_layers: 4, num_attention_heads: 32, "
      "num_key_value_heads: 4, head_dim: 128, intermediate_size: 6144, vocab_size: 32000}\n"
      "runs:\n  - {model: m, gpus: 8, dp: 8, global_batch: 32, micro_batch: 4, seq: 4096, iteration_s: 1}\n";
  auto set = parse_validation(text, "t.yaml");
  REQUIRE(set.ok());
  auto hw = load_hardware("gb200-nvl72", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  auto p = predict_run(set.value(), set.value().runs[0], hw.value());
  REQUIRE(p.ok());
  return p.value().predicted_s;
}
}  // namespace

TEST_CASE("a validation run's cudnn_version picks its release's attention curve and newer releases run faster") {
  const double v913 = gb200_seconds("9.13.1"), v918 = gb200_seconds("9.18.0"), v920 = gb200_seconds("9.20.0");
  const double newest = gb200_seconds("");
  CHECK(v918 < v913);       // 9.17.0's curve: 1131 against 775 TFLOP/s at 4k
  CHECK(v920 < v918);       // 9.19.1's
  CHECK(newest <= v920);    // 9.22.0's
  CHECK(gb200_seconds("9.11.0") == v913);  // older than every curve: the oldest
  auto bad = parse_validation("hardware: gb200-nvl72\nmodels:\n  m: {n_embd: 64, n_layer: 2, n_head: 4, vocab_size: 256}\n"
                              "runs:\n  - {model: m, gpus: 1, global_batch: 1, iteration_s: 1, cudnn_version: nine}\n",
                              "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "runs[0].cudnn_version");
  auto bad_file = parse_validation("hardware: gb200-nvl72\ncudnn_version: 9.x\nmodels:\n  m: {n_embd: 64, n_layer: 2, "
                                   "n_head: 4, vocab_size: 256}\nruns:\n  - {model: m, gpus: 1, global_batch: 1, "
                                   "iteration_s: 1}\n",
                                   "f.yaml");
  REQUIRE_FALSE(bad_file.ok());
  CHECK(bad_file.error().field == "cudnn_version");
}

TEST_CASE("every shipped GB200 and GB300 Megatron row states its container's cuDNN") {
  for (const char* f : {"megatron-bridge-gb200.yaml", "megatron-bridge-moe-gb200.yaml", "megatron-bridge-gb300.yaml",
                        "megatron-bridge-moe-gb300.yaml", "megatron-bridge-cards-gb200.yaml",
                        "megatron-bridge-cards-gb300.yaml", "megatron-lm-moe-recipes-gb200.yaml",
                        "megatron-lm-moe-recipes-gb300.yaml", "mcore-moe-report-gb200.yaml", "nemo-gb200-llama4-moe.yaml"}) {
    INFO(f);
    auto set = load_validation(kSource + "/validation/" + f);
    REQUIRE(set.ok());
    for (const ValidationRun& r : set.value().runs) {
      INFO(r.label);
      CHECK_FALSE(r.cudnn_version.empty());
    }
  }
}
