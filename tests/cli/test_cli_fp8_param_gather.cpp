// CLI of FP8 primary weights (--fp8-param-gather): memory, JSON, plan file, exports, one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
const std::string kLlama8b = source_path("examples/models/llama-3-8b.yaml");  // 32 layers
const std::string kBase = "estimate --model " + kLlama8b +
                          " --hardware b200 --gpus 8 --global-batch 128 --seq 8192 --framework megatron "
                          "--zero 1 --micro-batch 1 ";
}  // namespace

TEST_CASE("estimate --fp8-param-gather drops the linear weights' 16-bit copy, round-trips, exports") {
  const std::string plan = scratch_dir() + "/fp8-params-plan.json";
  for (const std::string recipe : {"current", "mxfp8"}) {
    CliResult off = run_cli(kBase + "--fp8 " + recipe + " --format json");
    CliResult on = run_cli(kBase + "--fp8 " + recipe + " --fp8-param-gather --format json --output " + plan);
    INFO(recipe << ": " << on.err);
    REQUIRE(off.exit_code == 0);
    REQUIRE(on.exit_code == 0);
    // Llama 3 8B: 32 layers of 218.1 M parameters, 8192 of them norms: 2 bytes each go.
    const double linear = 32.0 * (4096.0 * (4096 + 1024 + 1024 + 4096) + 3.0 * 4096 * 14336);
    CHECK(json_number(off.out, "weights_bytes") - json_number(on.out, "weights_bytes") == Approx(2.0 * linear));
    CHECK(on.out.find("\"fp8_param_gather\": true") != std::string::npos);
    CHECK(off.out.find("fp8_param_gather") == std::string::npos);
    if (recipe == "current") {  // the plan file round trip does not depend on the recipe (one run each)
      CliResult again = run_cli("estimate --plan " + plan + " --format json");
      REQUIRE(again.exit_code == 0);
      CHECK(json_number(again.out, "weights_bytes") == Approx(json_number(on.out, "weights_bytes")));
      CHECK(run_cli("estimate --plan " + plan).out.find("FP8 primary weights (--fp8-param-gather)") != std::string::npos);
    }
    CliResult ex = run_cli(kBase + "--fp8 " + recipe + " --fp8-param-gather --export slurm");
    REQUIRE(ex.exit_code == 0);
    CHECK(ex.out.find("--fp8-param-gather") != std::string::npos);
    CHECK((ex.out.find("--reuse-grad-buf-for-mxfp8-param-ag") != std::string::npos) == (recipe == "mxfp8"));
  }
}

TEST_CASE("estimate: FP8 primary weights are refused in one line without a Transformer Engine recipe or outside Megatron-Core") {
  check_bad(kBase + "--fp8-param-gather", {"--fp8-param-gather", "--fp8 is none"});
  check_bad("estimate --model " + kLlama8b + " --hardware b200 --gpus 8 --global-batch 128 --seq 8192 "
            "--framework torchtitan --zero 3 --fp8 current --fp8-param-gather",
            {"--fp8-param-gather", "torchtitan"});
  // Megatron-Core asserts the distributed optimizer (or Megatron-FSDP) under --fp8-param-gather.
  check_bad("estimate --model " + kLlama8b + " --hardware b200 --gpus 8 --global-batch 128 --seq 8192 "
            "--framework megatron --zero 0 --fp8 current --fp8-param-gather",
            {"--fp8-param-gather", "distributed optimizer"});
  // NeMo runs it, but the NeMo YAML export states no FP8: refused there, not dropped.
  check_bad("plan --model " + kLlama8b + " --hardware b200 --gpus 8 --global-batch 128 --seq 8192 "
            "--framework nemo --fp8 current --fp8-param-gather --export nemo",
            {"fp8_param_gather", "nemo"});
}

TEST_CASE("plan with FP8 primary weights keeps ZeRO 1 and up only") {
  CliResult r = run_cli("plan --model " + kLlama8b + " --hardware b200 --gpus 8 --global-batch 128 --seq 8192 "
                        "--framework megatron --fp8 current --fp8-param-gather --top 100 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"zero_stage\": 1") != std::string::npos);
  CHECK(r.out.find("\"zero_stage\": 0") == std::string::npos);
  CliResult without = run_cli("plan --model " + kLlama8b + " --hardware b200 --gpus 8 --global-batch 128 --seq 8192 "
                              "--framework megatron --fp8 current --top 100 --format json");
  REQUIRE(without.exit_code == 0);
  CHECK(without.out.find("\"zero_stage\": 0") != std::string::npos);  // the rule is what removes them
}
