// CLI of --moe-imbalance and --moe-capacity-factor: the costed expert load, its refusals, plan-file round trip, the
// megatron export, and the routing note drawn from the validation runs whose sources state their routing.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kMoe = source_path("examples/models/qwen3-30b-a3b.json");
std::string est(const std::string& rest) {
  return "estimate --model " + kMoe + " --hardware h100-80gb-sxm --gpus 16 --global-batch 512 --seq 4096 --ep 16 "
         "--etp 1 --zero 1 --framework megatron " + rest;
}
double step_s(const std::string& json) { return json_number(json, "step_s"); }
}  // namespace

TEST_CASE("estimate --moe-imbalance: the busiest expert's load slows the step, a capacity factor caps it") {
  CliResult balanced = run_cli(est("--format json"));
  CliResult skewed = run_cli(est("--moe-imbalance 1.5 --format json"));
  CliResult capped = run_cli(est("--moe-imbalance 1.5 --moe-capacity-factor 1.25 --format json"));
  CliResult at_cap = run_cli(est("--moe-imbalance 1.25 --format json"));
  REQUIRE(balanced.exit_code == 0);
  REQUIRE(skewed.exit_code == 0);
  REQUIRE(capped.exit_code == 0);
  REQUIRE(at_cap.exit_code == 0);
  CHECK(step_s(skewed.out) > step_s(balanced.out));
  CHECK(step_s(capped.out) < step_s(skewed.out));
  CHECK(step_s(capped.out) == Approx(step_s(at_cap.out)).epsilon(1e-12));  // min(imbalance, factor)
  CHECK(skewed.out.find("\"moe_imbalance\": 1.5") != std::string::npos);
  CHECK(balanced.out.find("moe_imbalance") == std::string::npos);
}

TEST_CASE("the expert load is refused in one line on a dense model and outside its range") {
  const std::string dense = source_path("examples/models/llama-3-8b.yaml");
  check_bad("estimate --model " + dense + " --hardware h100-80gb-sxm --gpus 8 --global-batch 8 --moe-imbalance 1.2",
            {"--moe-imbalance", "1.2", "dense"});
  check_bad(est("--moe-imbalance 0.5"), {"--moe-imbalance", "0.5"});
  check_bad(est("--moe-imbalance 100"), {"--moe-imbalance", "128 / 8"});
  check_bad(est("--moe-capacity-factor -1"), {"--moe-capacity-factor", "-1"});
}

TEST_CASE("a plan file keeps the expert load and the megatron export writes the capacity factor") {
  const std::string plan = scratch_dir() + "/moe-load-plan.json";
  CliResult saved = run_cli(est("--moe-imbalance 1.4 --moe-capacity-factor 1.25 --format json --output " + plan));
  REQUIRE(saved.exit_code == 0);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(step_s(again.out) == Approx(step_s(saved.out)).epsilon(1e-9));
  CliResult script = run_cli(est("--moe-capacity-factor 1.25 --export slurm"));
  REQUIRE(script.exit_code == 0);
  CHECK(script.out.find("--moe-expert-capacity-factor 1.25") != std::string::npos);
}

TEST_CASE("a MoE estimate at balanced routing notes how natural-routing runs were predicted, not when a load is given") {
  CliResult balanced = run_cli(est(""));
  REQUIRE(balanced.exit_code == 0);
  CHECK(balanced.err.find("trained with natural (unforced) routing") != std::string::npos);
  CHECK(balanced.err.find("--moe-imbalance") != std::string::npos);
  CliResult measured = run_cli(est("--moe-imbalance 1.2"));
  REQUIRE(measured.exit_code == 0);
  CHECK(measured.err.find("natural (unforced) routing") == std::string::npos);
}
