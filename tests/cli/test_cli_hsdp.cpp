// CLI of --shard-group (HSDP): help text, the table and JSON keys, the plan file read back, plan's
// choices, the torchtitan export's replicate x shard degrees, and the one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/llama-2-7b.yaml");
const std::string kJob = "--model " + kModel + " --hardware a100-80gb-sxm --gpus 64 --global-batch 64 --seq 4096 ";

std::string est(const std::string& rest) { return "estimate " + kJob + "--zero 3 --framework fsdp " + rest; }
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --shard-group") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--shard-group") != std::string::npos);
    CHECK(h.out.find("HSDP") != std::string::npos);
  }
}

TEST_CASE("HSDP flag: the config line and JSON carry it, memory is sharded over it, the plan file keeps it") {
  CliResult plain = run_cli(est("--format json"));
  const std::string plan = scratch_dir() + "/hsdp-plan.json";
  CliResult hsdp = run_cli(est("--shard-group 8 --format json --output " + plan));
  CliResult table = run_cli(est("--shard-group 8"));
  for (const CliResult* r : {&plain, &hsdp, &table}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  CHECK(plain.out.find("shard_group") == std::string::npos);  // plain sharding writes no key
  CHECK(json_number(hsdp.out, "shard_group") == 8);
  CHECK(table.out.find("zero=3 shard_group=8") != std::string::npos);
  // Optimizer state over 8 ranks instead of 64.
  CHECK(json_number(hsdp.out, "optimizer_bytes") == Approx(8.0 * json_number(plain.out, "optimizer_bytes")).epsilon(1e-6));
  CHECK(slurp(plan).find("\"shard_group\": 8") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(hsdp.out, "step_s"));
  // simulate and the HTML report name the shard group too.
  CliResult sim = run_cli("simulate " + kJob + "--zero 3 --framework fsdp --shard-group 8");
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  CHECK(sim.out.find("zero=3 shard_group=8") != std::string::npos);
  const std::string html = scratch_dir() + "/hsdp.html";
  REQUIRE(run_cli(est("--shard-group 8 --html " + html)).exit_code == 0);
  CHECK(slurp(html).find("HSDP, shard groups of 8") != std::string::npos);
  // A shard group as large as the DP group is plain sharding: the same figures.
  CliResult whole = run_cli(est("--shard-group 64 --format json"));
  REQUIRE(whole.exit_code == 0);
  CHECK(json_number(whole.out, "step_s") == json_number(plain.out, "step_s"));
}

TEST_CASE("HSDP flag where it cannot run: one line, exit 2") {
  check_bad("estimate " + kJob + "--zero 3 --shard-group 8", {"--shard-group", "8", "HSDP", "--framework meshplan"});
  check_bad("estimate " + kJob + "--zero 3 --framework deepspeed --shard-group 8", {"--shard-group", "deepspeed"});
  check_bad("estimate " + kJob + "--zero 0 --framework fsdp --shard-group 8", {"--shard-group", "zero=0"});
  check_bad(est("--shard-group 7"), {"--shard-group", "7", "dp=64"});
  check_bad("plan " + kJob + "--shard-group 8", {"--shard-group", "meshplan"});
}

TEST_CASE("plan --framework fsdp tries HSDP shard groups and the torchtitan export states replicate x shard") {
  CliResult plan = run_cli("plan " + kJob + "--framework fsdp --zero 3 --shard-group 8 --micro-batch 1 --top 1");
  INFO(plan.err);
  REQUIRE(plan.exit_code == 0);
  CHECK(plan.out.find(" 3/8 ") != std::string::npos);  // the zero column: ZeRO-3 within groups of 8
  CliResult tt = run_cli("plan " + kJob + "--framework torchtitan --zero 3 --shard-group 8 --micro-batch 1 "
                         "--export torchtitan");
  INFO(tt.err);
  REQUIRE(tt.exit_code == 0);
  CHECK(tt.out.find("data_parallel_replicate_degree = 8\n") != std::string::npos);
  CHECK(tt.out.find("data_parallel_shard_degree = 8\n") != std::string::npos);
  // Megatron: ZeRO-1 within instances of 8 DP ranks, 64 / 8 = 8 instances.
  CliResult mg = run_cli("plan " + kJob + "--framework megatron --zero 1 --shard-group 8 --tp 1 --pp 1 "
                         "--micro-batch 1 --export megatron");
  INFO(mg.err);
  REQUIRE(mg.exit_code == 0);
  CHECK(mg.out.find("--use-distributed-optimizer") != std::string::npos);
  CHECK(mg.out.find("--num-distributed-optimizer-instances 8") != std::string::npos);
  check_bad("plan " + kJob + "--framework nemo --zero 1 --shard-group 8", {"--shard-group", "nemo"});
}
