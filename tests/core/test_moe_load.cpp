// The routed-expert load a job is costed with: its ranges against the model (core/moe_load.h).
#include <catch2/catch.hpp>

#include "core/moe_load.h"

using namespace meshplan;

namespace {
ModelSpec moe(int64_t E, int64_t k) {
  ModelSpec m;
  m.name = "m";
  m.moe.num_experts = E;
  m.moe.experts_per_token = k;
  m.moe.expert_intermediate_size = 64;
  return m;
}
Job load(double imbalance, double capacity) {
  Job j;
  j.moe_imbalance = imbalance;
  j.moe_capacity_factor = capacity;
  return j;
}
}  // namespace

TEST_CASE("expert imbalance lies between balanced and every token on one expert (E over k)") {
  const ModelSpec m = moe(128, 8);  // at most 16 x the mean
  CHECK(validate_moe_load(m, load(1.0, 0.0), "w").empty());
  CHECK(validate_moe_load(m, load(16.0, 0.0), "w").empty());
  CHECK(validate_moe_load(m, load(1.3, 1.25), "w").empty());
  for (double bad : {0.9, 16.5, -1.0}) {
    const ErrorList e = validate_moe_load(m, load(bad, 0.0), "w");
    REQUIRE(e.size() == 1);
    CHECK(e.front().field == "moe_imbalance");
    CHECK(e.front().message.find("128 / 8") != std::string::npos);
  }
  for (double bad : {-0.5, 17.0}) {
    const ErrorList e = validate_moe_load(m, load(1.0, bad), "w");
    REQUIRE(e.size() == 1);
    CHECK(e.front().field == "moe_capacity_factor");
  }
}

TEST_CASE("a dense model takes neither an expert imbalance nor a capacity factor") {
  ModelSpec dense;
  dense.name = "llama";
  CHECK(validate_moe_load(dense, load(1.0, 0.0), "w").empty());
  const ErrorList e = validate_moe_load(dense, load(1.2, 1.0), "w");
  REQUIRE(e.size() == 2);
  CHECK(e[0].field == "moe_imbalance");
  CHECK(e[1].field == "moe_capacity_factor");
  CHECK(e[0].message.find("llama is dense") != std::string::npos);
}

TEST_CASE("balanced routing is no imbalance and no capacity limit") {
  CHECK(moe_load_balanced(load(1.0, 0.0)));
  CHECK_FALSE(moe_load_balanced(load(1.2, 0.0)));
  CHECK_FALSE(moe_load_balanced(load(1.0, 1.0)));
}
