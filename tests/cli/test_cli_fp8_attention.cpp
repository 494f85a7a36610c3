// CLI of FP8 fused attention (--fp8-attention): the measured ratio in the step, JSON, plan file, exports,
// one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kLlama8b = source_path("examples/models/llama-3-8b.yaml");  // head dim 128
const std::string kBase = "estimate --model " + kLlama8b +
                          " --hardware gb200-nvl72 --gpus 8 --global-batch 64 --seq 16384 --framework megatron "
                          "--zero 1 --micro-batch 1 --fp8 mxfp8 ";
}  // namespace

TEST_CASE("estimate --fp8-attention costs the profile's measured FP8 attention and round-trips") {
  const std::string plan = scratch_dir() + "/fp8-attention-plan.json";
  CliResult off = run_cli(kBase + "--format json");
  CliResult on = run_cli(kBase + "--fp8-attention --format json --output " + plan);
  INFO(off.err << on.err);
  REQUIRE(off.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  // GB200, head dim 128, 16k tokens, MXFP8: forward 1.17x and backward 1.08x faster than bf16 (cuDNN 9.22).
  CHECK(json_number(on.out, "step_s") < json_number(off.out, "step_s"));
  CHECK(on.out.find("\"fp8_attention\": true") != std::string::npos);
  CHECK(off.out.find("fp8_attention") == std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(json_number(again.out, "step_s") == json_number(on.out, "step_s"));
  CHECK(run_cli("estimate --plan " + plan).out.find("mxfp8 attention (--fp8-attention)") != std::string::npos);
  CliResult ex = run_cli(kBase + "--fp8-attention --export slurm");
  INFO(ex.err);
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("--fp8-dot-product-attention") != std::string::npos);
  CHECK(run_cli(kBase + "--export slurm").out.find("--fp8-dot-product-attention") == std::string::npos);
}

TEST_CASE("fp8 attention on the command line needs a Transformer Engine recipe and Megatron-Core, and exports only for megatron") {
  const std::string no_fp8 = "estimate --model " + kLlama8b +
                             " --hardware gb200-nvl72 --gpus 8 --global-batch 64 --seq 4096 --framework megatron "
                             "--fp8-attention";
  check_bad(no_fp8, {"--fp8-attention", "--fp8"});
  check_bad("estimate --model " + kLlama8b + " --hardware gb200-nvl72 --gpus 8 --global-batch 64 --seq 4096 "
            "--framework torchtitan --fp8 rowwise --fp8-attention",
            {"--fp8-attention", "torchtitan"});
  check_bad("plan --model " + kLlama8b + " --hardware gb200-nvl72 --gpus 8 --global-batch 64 --seq 4096 "
            "--framework nemo --fp8 mxfp8 --fp8-attention --export nemo",
            {"fp8_attention", "nemo"});
}
