// CLI of ZeRO-3 on MoE models (costmodel/expert_fsdp.h): estimate and simulate under torchtitan, the
// plan-file round trip, the torchtitan export, and the one-line refusals (DeepSpeed, HSDP, meshplan run).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
const std::string kQwen = source_path("examples/models/qwen3-30b-a3b.json");

// Qwen3-30B-A3B on 16 H100: FSDP 16, EP 4, so each MoE layer's 32 local experts are sharded 4 ways.
std::string qwen(const std::string& rest) {
  return "--model " + kQwen + " --hardware h100-80gb-sxm --gpus 16 --global-batch 32 --seq 4096 " + rest;
}
}  // namespace

TEST_CASE("ZeRO-3 on a MoE model: estimated under torchtitan and costlier in DP time than the experts whole") {
  CliResult sharded = run_cli("estimate " + qwen("--framework torchtitan --zero 3 --ep 4 --format json"));
  CliResult whole = run_cli("estimate " + qwen("--framework torchtitan --zero 3 --ep 16 --format json"));
  REQUIRE(sharded.exit_code == 0);
  REQUIRE(whole.exit_code == 0);
  const auto a = nlohmann::json::parse(sharded.out), b = nlohmann::json::parse(whole.out);
  CHECK(a["config"]["zero_stage"] == 3);
  CHECK(a["config"]["ep"] == 4);
  // EP 4 leaves 32 experts per GPU sharded over 4 ranks; EP 16 holds 8 whole ones.
  CHECK(a["time"]["dp_comm_s"].get<double>() > b["time"]["dp_comm_s"].get<double>());
  // ... and both hold 1/16 of each MoE layer's experts in their shards: the same static bytes.
  for (const char* k : {"weights_bytes", "gradients_bytes", "optimizer_bytes"})
    CHECK(a["memory"][k].get<double>() == Approx(b["memory"][k].get<double>()).epsilon(1e-9));
}

TEST_CASE("ZeRO-3 on a MoE model: the plan file round-trips and torchtitan's export names the expert mesh") {
  const std::string plan = scratch_dir() + "/expert-fsdp-plan.json";
  CliResult p = run_cli("plan " + qwen("--framework torchtitan --zero 3 --ep 4 --pp 1 --tp 1 --top 1 --output " + plan +
                                       " --export torchtitan"));
  REQUIRE(p.exit_code == 0);
  for (const char* want : {"data_parallel_shard_degree = 16", "expert_parallel_degree = 4",
                           "fsdp_reshard_after_forward = \"always\""})
    CHECK(p.out.find(want) != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(back.exit_code == 0);
  CHECK(nlohmann::json::parse(back.out)["config"]["zero_stage"] == 3);
  CliResult sim = run_cli("simulate --plan " + plan);
  REQUIRE(sim.exit_code == 0);
}

TEST_CASE("ZeRO-3 on a MoE model where it cannot run: one line and exit 2") {
  check_bad("estimate " + qwen("--framework deepspeed --zero 3 --ep 4"),
            {"--zero", "MoE not supported with Stage 3", "--framework torchtitan"});
  check_bad("estimate " + qwen("--framework torchtitan --zero 3 --shard-group 8"),
            {"--shard-group", "not modelled"});
}
