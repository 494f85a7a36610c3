// Validation keys of the expert load (moe_imbalance, moe_capacity_factor, moe_routing) and the routing note's rule.
#include <catch2/catch.hpp>

#include "core/io.h"
#include "costmodel/regime.h"
#include "costmodel/validate.h"

using namespace meshplan;

namespace {
const std::string kSource = MESHPLAN_SOURCE_DIR;
const std::string kHead =
    "hardware: h100-80gb-sxm\nmodels:\n"
    "  moe: {model_type: mixtral, hidden_size: 1024, num_hidden_layers: 2, num_attention_heads: 8, "
    "num_key_value_heads: 8, intermediate_size: 2048, vocab_size: 32000, num_local_experts: 8, num_experts_per_tok: 2}\n"
    "  dense: {model_type: llama, hidden_size: 1024, num_hidden_layers: 2, num_attention_heads: 8, "
    "num_key_value_heads: 8, intermediate_size: 2048, vocab_size: 32000}\n"
    "runs:\n";

Result<ValidationSet> parse(const std::string& run) { return parse_validation(kHead + "  - {" + run + "}\n", "t.yaml"); }
const char* kRun = "model: moe, gpus: 8, dp: 8, ep: 8, etp: 1, global_batch: 8, micro_batch: 1, seq: 2048, iteration_s: 1";
}  // namespace

TEST_CASE("a validation run's published expert load is costed, its routing recorded, bad values named") {
  auto hw = load_hardware("h100-80gb-sxm", kSource + "/hardware-profiles");
  REQUIRE(hw.ok());
  auto plain = parse(kRun);
  auto skewed = parse(std::string(kRun) + ", moe_imbalance: 1.5, moe_routing: natural");
  REQUIRE(plain.ok());
  REQUIRE(skewed.ok());
  CHECK(skewed.value().runs[0].moe_routing == "natural");
  CHECK(plain.value().runs[0].moe_routing.empty());
  const Problem p = run_problem(skewed.value(), skewed.value().runs[0], hw.value());
  CHECK(p.job.moe_imbalance == 1.5);
  auto a = predict_run(plain.value(), plain.value().runs[0], hw.value());
  auto b = predict_run(skewed.value(), skewed.value().runs[0], hw.value());
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK(b.value().predicted_s > a.value().predicted_s);
  auto bad_routing = parse(std::string(kRun) + ", moe_routing: random");
  REQUIRE_FALSE(bad_routing.ok());
  CHECK(bad_routing.error().field == "runs[0].moe_routing");
  auto too_skewed = parse(std::string(kRun) + ", moe_imbalance: 5");  // 8 experts, top-2: at most 4
  REQUIRE_FALSE(too_skewed.ok());
  CHECK(too_skewed.error().field == "runs[0].moe_imbalance");
  auto dense = parse("model: dense, gpus: 8, dp: 8, global_batch: 8, iteration_s: 1, moe_routing: forced");
  REQUIRE_FALSE(dense.ok());
  CHECK(dense.error().field == "runs[0].moe_routing");
}

TEST_CASE("the routing note speaks only for enough natural-routing runs that were predicted badly") {
  RegimeAccuracy natural{20, 0.356, -0.35}, forced{106, 0.134, -0.08};
  const std::string note = routing_note(natural, forced);
  CHECK(note.find("on 20 published held-out runs") != std::string::npos);
  CHECK(note.find("35.6%") != std::string::npos);
  CHECK(note.find("too fast") != std::string::npos);
  CHECK(note.find("13.4% on 106 with forced balancing") != std::string::npos);
  CHECK(routing_note(RegimeAccuracy{2, 0.5, -0.5}, forced).empty());     // too few runs to judge
  CHECK(routing_note(RegimeAccuracy{20, 0.05, -0.01}, forced).empty());  // not weak
}

TEST_CASE("every shipped MoE row that names its routing names a known one") {
  for (const char* f : {"megatron-bridge-moe-h100.yaml", "megatron-bridge-cards-h100.yaml", "megatron-bridge-skills-h100.yaml",
                        "dgxc-moe-deepseek-v3-gb200.yaml", "torchtitan-gb200-moe.yaml"}) {
    INFO(f);
    auto set = load_validation(kSource + "/validation/" + f);
    REQUIRE(set.ok());
    int named = 0;
    for (const ValidationRun& r : set.value().runs)
      if (!r.moe_routing.empty()) ++named;
    CHECK(named > 0);
  }
}
