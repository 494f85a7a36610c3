// CLI of Megatron-Core's --tp-comm-overlap and --overlap-param-gather: costs, plan file, exports, plan
// space, simulator agreement and one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
const std::string kLlama70b = source_path("examples/models/llama-3-70b.yaml");
const std::string kBase = "estimate --model " + kLlama70b +
                          " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework megatron "
                          "--tp 8 --pp 2 --zero 1 --micro-batch 1 --sequence-parallel ";
}  // namespace

TEST_CASE("estimate --tp-comm-overlap --overlap-param-gather: hidden TP and gather time, round-trip, exports") {
  CliResult off = run_cli(kBase + "--format json");
  const std::string plan = scratch_dir() + "/megatron-overlap-plan.json";
  CliResult on = run_cli(kBase + "--tp-comm-overlap --overlap-param-gather --format json --output " + plan);
  INFO(on.err);
  REQUIRE(off.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  CHECK(json_number(on.out, "tp_comm_s") < 0.5 * json_number(off.out, "tp_comm_s"));  // TP under the GEMMs
  CHECK(json_number(on.out, "dp_comm_s") < json_number(off.out, "dp_comm_s"));        // gather under the forward
  CHECK(on.out.find("\"tp_comm_overlap\": true") != std::string::npos);
  CHECK(on.out.find("\"overlap_param_gather\": true") != std::string::npos);
  CHECK(off.out.find("tp_comm_overlap") == std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("(--tp-comm-overlap)") != std::string::npos);
  CHECK(again.out.find("(--overlap-param-gather)") != std::string::npos);
  // The launch script runs what was costed: each flag only when asked for.
  CliResult with = run_cli(kBase + "--tp-comm-overlap --overlap-param-gather --export torchrun");
  CliResult without = run_cli(kBase + "--export torchrun");
  REQUIRE(with.exit_code == 0);
  REQUIRE(without.exit_code == 0);
  CHECK(with.out.find("--tp-comm-overlap") != std::string::npos);
  CHECK(with.out.find("--overlap-param-gather") != std::string::npos);
  CHECK(without.out.find("--tp-comm-overlap") == std::string::npos);
  CHECK(without.out.find("--overlap-param-gather") == std::string::npos);
  CHECK(without.out.find("--overlap-grad-reduce") != std::string::npos);
}

TEST_CASE("simulate agrees with estimate under both overlaps") {
  CliResult r = run_cli("simulate --model " + kLlama70b +
                        " --hardware h100-80gb-sxm --gpus 64 --global-batch 64 --seq 4096 --framework megatron --tp 8 "
                        "--pp 2 --zero 1 --micro-batch 1 --sequence-parallel --tp-comm-overlap --overlap-param-gather");
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("[ok] estimate") != std::string::npos);
}

TEST_CASE("plan under --tp-comm-overlap and --overlap-param-gather keeps the layouts Megatron runs them on") {
  CliResult r = run_cli("plan --model " + kLlama70b +
                        " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework megatron "
                        "--tp-comm-overlap --overlap-param-gather --top 50 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"zero_stage\": 0") == std::string::npos);
  CHECK(r.out.find("\"zero_stage\": 1") != std::string::npos);
  CHECK(r.out.find("\"dp_overlap\": false") == std::string::npos);
  // NeMo's YAML states both, as Transformer Engine's and Apex DistributedFusedAdam's keys.
  CliResult nemo = run_cli("plan --model " + kLlama70b +
                           " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework nemo "
                           "--tp-comm-overlap --overlap-param-gather --export nemo");
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("ub_tp_comm_overlap: true") != std::string::npos);
  CHECK(nemo.out.find("overlap_param_sync: true") != std::string::npos);
}

TEST_CASE("estimate: the overlaps are refused in one line where Megatron-Core refuses them") {
  check_bad("estimate --model " + kLlama70b +
                " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework fsdp --tp 8 --zero 3 "
                "--tp-comm-overlap",
            {"--tp-comm-overlap", "fsdp"});
  check_bad("estimate --model " + kLlama70b +
                " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework megatron --tp 8 "
                "--pp 2 --zero 1 --tp-comm-overlap",
            {"--tp-comm-overlap", "sequence parallelism"});
  check_bad(kBase + "--overlap-param-gather --no-dp-overlap", {"--overlap-param-gather", "--overlap-grad-reduce"});
  check_bad("estimate --model " + kLlama70b +
                " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework megatron --tp 8 "
                "--pp 2 --zero 0 --sequence-parallel --overlap-param-gather",
            {"--overlap-param-gather", "distributed optimizer"});
  check_bad("plan --model " + kLlama70b +
                " --hardware h100-80gb-sxm --gpus 64 --global-batch 128 --seq 4096 --framework torchtitan "
                "--overlap-param-gather",
            {"--overlap-param-gather", "torchtitan"});
}
