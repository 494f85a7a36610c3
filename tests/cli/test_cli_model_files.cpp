// Model files end to end: MoE configs give exact `parameters` / `active_parameters` in the estimate
// JSON and both counts in the estimate and plan headers; an unmodelled key is one line, exit 2.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using nlohmann::json;

static const std::string kMixtral = source_path("examples/models/mixtral-8x7b.json");
static const std::string kJob = " --hardware h100-80gb-sxm --gpus 64 --global-batch 256 --seq 4096 --tp 8 --pp 2 --sequence-parallel";

TEST_CASE("estimate: Mixtral-8x7B's exact total and active counts in JSON and the header") {
  const CliResult r = run_cli("estimate --model " + kMixtral + kJob + " --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["parameters"].get<int64_t>() == 46702792704);
  CHECK(j["active_parameters"].get<int64_t>() == 12879925248);
  const CliResult t = run_cli("estimate --model " + kMixtral + kJob);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("(46.7B params, 12.9B active)") != std::string::npos);
}

TEST_CASE("estimate: a dense model's active parameters equal its total, the header is unchanged") {
  const std::string llama = source_path("examples/models/llama-2-7b.yaml");
  const CliResult r = run_cli("estimate --model " + llama + kJob + " --format json");
  REQUIRE(r.exit_code == 0);
  const json j = json::parse(r.out);
  CHECK(j["parameters"].get<int64_t>() == 6738415616);
  CHECK(j["active_parameters"] == j["parameters"]);
  const CliResult t = run_cli("estimate --model " + llama + kJob);
  CHECK(t.out.find("(6.74B params) on") != std::string::npos);
}

TEST_CASE("plan: the header gives DeepSeek-V3's total and active parameters") {
  const CliResult r = run_cli("plan --model " + source_path("examples/models/deepseek-v3.json") +
                              " --hardware h100-80gb-sxm --gpus 2048 --global-batch 4096 --seq 4096 --top 1");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("deepseek-v3 (671B parameters, 37.6B active)") != std::string::npos);
}

TEST_CASE("a model key that changes the count and is not modelled: one line naming it, exit 2") {
  const CliResult r = run_cli("estimate --model " + source_path("tests/data/unmodelled_key.json") + kJob);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("interleave_moe_layer_step") != std::string::npos);
  CHECK(r.err.find('\n') == r.err.size() - 1);
}
