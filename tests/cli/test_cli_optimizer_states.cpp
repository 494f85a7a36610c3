// CLI of Megatron-Core's precision-aware optimizer (--precision-aware-optimizer, --exp-avg-dtype, ...):
// memory, JSON, plan file, exports, one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
const std::string kLlama8b = source_path("examples/models/llama-3-8b.yaml");
const std::string kModel = "--model " + kLlama8b + " --hardware h100-80gb-sxm --gpus 8 --global-batch 128 --seq 8192 ";
const std::string kBase = "estimate " + kModel + "--framework megatron --tp 1 --pp 1 --zero 1 --micro-batch 1 ";
}  // namespace

TEST_CASE("estimate with bf16 Adam moments keeps 6 bytes of optimizer state per parameter and round-trips and exports") {
  const std::string plan = scratch_dir() + "/optimizer-states-plan.json";
  CliResult plain = run_cli(kBase + "--format json");
  CliResult aware = run_cli(kBase + "--precision-aware-optimizer --format json");
  CliResult bf16 = run_cli(kBase + "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 --format json --output " + plan);
  INFO(bf16.err);
  REQUIRE(plain.exit_code == 0);
  REQUIRE(aware.exit_code == 0);
  REQUIRE(bf16.exit_code == 0);
  // ZeRO 1 over DP 8: 12, 10 (the fp32 master as its 16-bit remainder) and 6 bytes per parameter, / 8.
  const double opt = json_number(plain.out, "optimizer_bytes");
  CHECK(json_number(aware.out, "optimizer_bytes") == Approx(opt * 10.0 / 12.0));
  CHECK(json_number(bf16.out, "optimizer_bytes") == Approx(opt * 6.0 / 12.0));
  CHECK(json_number(plain.out, "weights_bytes") == json_number(bf16.out, "weights_bytes"));
  CHECK(plain.out.find("optimizer_states") == std::string::npos);  // a default job's JSON is unchanged
  CHECK(bf16.out.find("\"exp_avg\": \"bf16\"") != std::string::npos);
  CHECK(bf16.out.find("\"precision_aware\": true") != std::string::npos);
  // The optimizer step reads and writes fewer bytes (costmodel/step.cpp: 2 x optimizer + 3 x grads + weights).
  CHECK(json_number(bf16.out, "optimizer_s") < json_number(plain.out, "optimizer_s"));
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(json_number(again.out, "optimizer_bytes") == Approx(json_number(bf16.out, "optimizer_bytes")));
  CHECK(run_cli("estimate --plan " + plan).out.find("optimizer states fp32/bf16/bf16") != std::string::npos);
  CliResult ex = run_cli("plan " + kModel + "--framework megatron --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 "
                         "--top 1 --export megatron");
  REQUIRE(ex.exit_code == 0);
  for (const char* arg : {"--use-precision-aware-optimizer", "--main-params-dtype fp32", "--exp-avg-dtype bf16",
                          "--exp-avg-sq-dtype bf16", "--use-distributed-optimizer"})
    CHECK(ex.out.find(arg) != std::string::npos);
}

TEST_CASE("plan with the precision-aware optimizer keeps ZeRO 1 and up only") {
  CliResult r = run_cli("plan " + kModel + "--framework megatron --exp-avg-dtype bf16 --top 100 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"zero_stage\": 1") != std::string::npos);
  CHECK(r.out.find("\"zero_stage\": 0") == std::string::npos);
}

TEST_CASE("the optimizer-state flags are refused in one line outside Megatron-Core and at ZeRO 0 and in other exports") {
  check_bad("estimate " + kModel + "--zero 1 --exp-avg-dtype bf16", {"--exp-avg-dtype", "meshplan"});
  check_bad("estimate " + kModel + "--framework deepspeed --zero 1 --precision-aware-optimizer",
            {"--precision-aware-optimizer", "deepspeed"});
  check_bad(kBase + "--main-params-dtype bf16", {"--main-params-dtype", "fp32 or fp16"});
  check_bad("estimate " + kModel + "--framework megatron --tp 1 --pp 1 --zero 0 --exp-avg-dtype bf16",
            {"--precision-aware-optimizer", "distributed optimizer"});
  check_bad("plan " + kModel + "--framework nemo --exp-avg-dtype bf16 --export nemo",
            {"optimizer_states", "nemo export"});
}
