// Validation runs costed on the attention path their Transformer Engine release takes (core/te_attention_backend.h).
#include <catch2/catch.hpp>

#include "core/io.h"
#include "costmodel/validate.h"

using namespace meshplan;

namespace {
const std::string kSource = MESHPLAN_SOURCE_DIR;

const char* kMla =
    "models:\n"
    "  m: {model_type: deepseek_v3, hidden_size: 2048, num_hidden_layers: 2, num_attention_heads: 16, "
    "num_key_value_heads: 16, intermediate_size: 8192, vocab_size: 32000, q_lora_rank: 512, kv_lora_rank: 256, "
    "qk_rope_head_dim: 64, qk_nope_head_dim: 128, v_head_dim: 128}\n"
    "runs:\n  - {model: m, gpus: 8, dp: 8, global_batch: 8, micro_batch: 1, seq: 4096, recompute: selective, "
    "iteration_s: 1}\n";

Problem problem(const std::string& head) {
  auto set = parse_validation(head + kMla, "t.yaml");
  REQUIRE(set.ok());
  auto hw = load_hardware(set.value().hardware, kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  return run_problem(set.value(), set.value().runs[0], hw.value());
}
}  // namespace

TEST_CASE("a validation file's te_version decides whether MLA on Blackwell runs TE's fused attention") {
  CHECK(problem("hardware: gb200-nvl72\nframework: megatron\nte_version: 2.2\n").job.knobs.attention ==
        AttentionKind::Materialized);
  CHECK(problem("hardware: gb200-nvl72\nframework: megatron\n").job.knobs.attention == AttentionKind::Fused);
  CHECK(problem("hardware: h100-80gb-sxm\nframework: megatron\nte_version: 2.2\n").job.knobs.attention ==
        AttentionKind::Fused);
  CHECK(problem("hardware: gb200-nvl72\nframework: torchtitan\nte_version: 2.2\n").job.knobs.attention ==
        AttentionKind::Fused);  // not TE's attention
  auto bad = parse_validation(std::string("hardware: gb200-nvl72\nte_version: two\n") + kMla, "b.yaml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "te_version");
  std::string per_run = kMla;
  per_run.replace(per_run.find("iteration_s: 1}"), 15, "iteration_s: 1, te_version: 2.x}");
  auto bad_run = parse_validation("hardware: gb200-nvl72\n" + per_run, "r.yaml");
  REQUIRE_FALSE(bad_run.ok());
  CHECK(bad_run.error().field == "runs[0].te_version");
}

TEST_CASE("the DGX Cloud DeepSeek-V3 GB200 rows ran NeMo 25.04's TE 2.2: unfused MLA attention") {
  auto set = load_validation(kSource + "/validation/dgxc-moe-deepseek-v3-gb200.yaml");
  REQUIRE(set.ok());
  auto hw = load_hardware("gb200-nvl72", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  for (const ValidationRun& r : set.value().runs) {
    INFO(r.label);
    CHECK(r.te_version == "2.2");
    const Problem p = run_problem(set.value(), r, hw.value());
    CHECK(p.job.knobs.attention == AttentionKind::Materialized);
    CHECK(p.job.knobs.te_attention == TeAttentionPath::Unfused);
  }
}
