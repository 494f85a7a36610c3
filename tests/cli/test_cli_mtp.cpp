// CLI of --mtp-layers (multi-token prediction, costmodel/mtp.h): help text, DeepSeek-V3's config.json
// without and with it, the plan-file round trip, Megatron's flags and layout, and the one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kV3 = source_path("examples/models/deepseek-v3.json");
const std::string kLlama = source_path("examples/models/llama-2-7b.yaml");

std::string v3(const std::string& rest) {
  return "estimate --model " + kV3 + " --hardware h100-80gb-sxm --gpus 1024 --global-batch 1024 --seq 4096 "
         "--tp 2 --pp 8 --ep 64 --zero 1 --sequence-parallel --framework megatron --format json " + rest;
}
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --mtp-layers") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--mtp-layers") != std::string::npos);
    CHECK(h.out.find("--mtp-num-layers") != std::string::npos);
  }
}

TEST_CASE("mtp-layers 1 trains DeepSeek-V3's MTP module: its weights reported, the step slower, the plan keeps it") {
  CliResult off = run_cli(v3(""));
  const std::string plan = scratch_dir() + "/mtp-plan.json";
  CliResult on = run_cli(v3("--mtp-layers 1 --output " + plan));
  for (const CliResult* r : {&off, &on}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  // num_nextn_predict_layers in config.json says what the checkpoint holds; it is not trained unless asked.
  CHECK(off.out.find("mtp_parameters") == std::string::npos);
  CHECK(json_number(on.out, "mtp_parameters") == 11610068224.0);
  CHECK(json_number(on.out, "parameters") == json_number(off.out, "parameters"));
  CHECK(json_number(on.out, "step_s") > json_number(off.out, "step_s"));
  // Stage 0 (the most micro-batches in flight) stays the worst stage; the MTP stage's memory is
  // checked in tests/costmodel/test_mtp.cpp.
  const std::string j = slurp(plan);
  CHECK(j.find("\"mtp_layers\": 1") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(on.out, "step_s"));
  CliResult table = run_cli("estimate --plan " + plan);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("+ 11.6B in MTP modules") != std::string::npos);
  CHECK(table.out.find("not trained here") == std::string::npos);
  // Without --mtp-layers the table says the config describes a module and how to train it.
  std::string table_cmd = v3("");
  table_cmd.replace(table_cmd.find("--format json"), 13, "--format table");
  CliResult untrained = run_cli(table_cmd);
  REQUIRE(untrained.exit_code == 0);
  CHECK(untrained.out.find("describes 1 multi-token-prediction module(s) (num_nextn_predict_layers), not trained "
                           "here: --mtp-layers 1") != std::string::npos);
}

TEST_CASE("Megatron and NeMo exports carry the MTP modules, and an uneven layout names them before the loss") {
  const std::string common = "plan --model " + kLlama + " --hardware a100-80gb-sxm --gpus 16 --global-batch 64 --seq 4096 "
                             "--mtp-layers 1 --tp 2 --pp 4 --micro-batch 1 ";
  CliResult meg = run_cli(common + "--framework megatron --export megatron");
  INFO(meg.err);
  REQUIRE(meg.exit_code == 0);
  CHECK(meg.out.find("--mtp-num-layers 1") != std::string::npos);
  CliResult nemo = run_cli(common + "--framework nemo --export nemo");
  INFO(nemo.err);
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("mtp_num_layers: 1") != std::string::npos);
  // 32 layers over 3 stages: a layout, whose last stage holds the MTP layer ("m") before the loss.
  CliResult uneven = run_cli("plan --model " + kLlama + " --hardware a100-80gb-sxm --gpus 24 --global-batch 48 "
                             "--seq 4096 --framework megatron --mtp-layers 1 --tp 8 --pp 3 --export megatron");
  INFO(uneven.err);
  REQUIRE(uneven.exit_code == 0);
  CHECK(uneven.out.find("--pipeline-model-parallel-layout \"Et*") != std::string::npos);
  CHECK(uneven.out.find("mL\"") != std::string::npos);
}

TEST_CASE("mtp-layers where it cannot run, or out of range: one line, exit 2") {
  const std::string base = "estimate --model " + kLlama + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 ";
  check_bad(base + "--mtp-layers 1", {"mtp_layers", "framework meshplan", "--framework megatron or nemo"});
  check_bad(base + "--mtp-layers 1 --framework fsdp", {"mtp_layers", "framework fsdp"});
  check_bad(base + "--mtp-layers -1 --framework megatron", {"--mtp-layers", "-1"});
  check_bad(base + "--mtp-layers 65 --framework megatron", {"--mtp-layers", "65"});
  check_bad("plan --model " + kLlama + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 --mtp-layers 1 "
            "--export torchtitan",
            {"mtp_layers"});
  const std::string plan = scratch_dir() + "/mtp-plan-refuse.json";
  REQUIRE(run_cli(base + "--framework megatron --mtp-layers 1 --output " + plan).exit_code == 0);
  check_bad("estimate --plan " + plan + " --mtp-layers 0", {"--mtp-layers", "cannot be combined with --plan"});
}
