// CLI of Megatron-Core's DDP bucket size (--ddp-bucket-size): the edge bucket's exposed collectives in the
// estimate, the plan-file round trip, the Megatron export, one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
const std::string kLlama8b = source_path("examples/models/llama-3-8b.yaml");
// One micro-batch per rank over 8 nodes: the embedding's bucket is reduced and gathered in the open.
const std::string kBase = "estimate --model " + kLlama8b +
                          " --hardware b200 --gpus 64 --global-batch 64 --seq 8192 --framework megatron --zero 1 "
                          "--micro-batch 1 --overlap-param-gather ";
}  // namespace

TEST_CASE("estimate --ddp-bucket-size sets the edge bucket, round-trips through a plan file and exports") {
  const std::string plan = scratch_dir() + "/ddp-bucket-plan.json";
  CliResult def = run_cli(kBase + "--format json");
  CliResult set = run_cli(kBase + "--ddp-bucket-size 768000000 --format json --output " + plan);
  INFO(set.err);
  REQUIRE(def.exit_code == 0);
  REQUIRE(set.exit_code == 0);
  CHECK(json_number(def.out, "dp_comm_s") > 0.0);  // the edge bucket, exposed even at one micro-batch
  CHECK(set.out.find("\"ddp_bucket_size\": 768000000") != std::string::npos);
  CHECK(def.out.find("ddp_bucket_size") == std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(json_number(again.out, "step_s") == Approx(json_number(set.out, "step_s")));
  CHECK(again.out.find("\"ddp_bucket_size\": 768000000") != std::string::npos);
  CliResult ex = run_cli(kBase + "--ddp-bucket-size 768000000 --export slurm");
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("--ddp-bucket-size 768000000") != std::string::npos);
  CHECK(run_cli(kBase + "--export slurm").out.find("--ddp-bucket-size") == std::string::npos);
  CHECK(run_cli("estimate --help").out.find("--ddp-bucket-size") != std::string::npos);
}

TEST_CASE("estimate --ddp-bucket-size is refused in one line outside Megatron-Core") {
  check_bad(kBase + "--ddp-bucket-size -5", {"--ddp-bucket-size", "parameter count"});
  check_bad("estimate --model " + kLlama8b + " --hardware b200 --gpus 64 --global-batch 64 --seq 8192 "
            "--framework fsdp --zero 3 --ddp-bucket-size 768000000",
            {"--ddp-bucket-size", "fsdp"});
}
