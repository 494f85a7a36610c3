// CLI of --moe-dispatcher (core/moe_dispatcher.h): help text, the flex dispatcher's cheaper cross-node
// dispatch, the plan-file round trip, Megatron's and NeMo's flags, and the one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kV3 = source_path("examples/models/deepseek-v3.json");
const std::string kLlama = source_path("examples/models/llama-2-7b.yaml");

// DeepSeek-V3 at EP 32 over 4 nodes of 8 B200 (Megatron-Bridge 26.04.01's layout).
std::string v3(const std::string& rest) {
  return "estimate --model " + kV3 + " --hardware b200 --gpus 256 --global-batch 4096 --seq 4096 --pp 8 "
         "--virtual-stages 2 --schedule interleaved --ep 32 --etp 1 --zero 1 --framework megatron --format json " + rest;
}
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --moe-dispatcher") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--moe-dispatcher") != std::string::npos);
    CHECK(h.out.find("hybridep") != std::string::npos);
  }
}

TEST_CASE("moe-dispatcher deepep sends less across nodes than alltoall, and the plan file keeps it") {
  CliResult all = run_cli(v3(""));
  const std::string plan = scratch_dir() + "/deepep-plan.json";
  CliResult deepep = run_cli(v3("--moe-dispatcher deepep --output " + plan));
  CliResult hybrid = run_cli(v3("--moe-dispatcher hybridep"));
  for (const CliResult* r : {&all, &deepep, &hybrid}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  CHECK(all.out.find("moe_dispatcher") == std::string::npos);  // the default writes no key
  CHECK(json_number(deepep.out, "tp_comm_s") < 0.6 * json_number(all.out, "tp_comm_s"));
  CHECK(json_number(hybrid.out, "tp_comm_s") == json_number(deepep.out, "tp_comm_s"));  // costed alike
  CHECK(slurp(plan).find("\"moe_dispatcher\": \"deepep\"") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(deepep.out, "step_s"));
}

TEST_CASE("Megatron and NeMo exports name the flex dispatcher and its backend") {
  const std::string common = "plan --model " + source_path("examples/models/qwen3-30b-a3b.json") +
                             " --hardware b200 --gpus 16 --global-batch 256 --seq 4096 --ep 8 --etp 1 --zero 1 "
                             "--moe-dispatcher deepep ";
  CliResult meg = run_cli(common + "--framework megatron --export megatron");
  INFO(meg.err);
  REQUIRE(meg.exit_code == 0);
  CHECK(meg.out.find("--moe-token-dispatcher-type flex") != std::string::npos);
  CHECK(meg.out.find("--moe-flex-dispatcher-backend deepep") != std::string::npos);
  CliResult nemo = run_cli(common + "--framework nemo --export nemo");
  INFO(nemo.err);
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("moe_token_dispatcher_type: flex") != std::string::npos);
  CHECK(nemo.out.find("moe_flex_dispatcher_backend: deepep") != std::string::npos);
}

TEST_CASE("moe-dispatcher where it cannot run: one line, exit 2") {
  check_bad("estimate --model " + kV3 + " --hardware b200 --gpus 256 --global-batch 4096 --ep 32 --pp 8 "
            "--moe-dispatcher deepep",
            {"--moe-dispatcher", "framework meshplan", "--framework megatron or nemo"});
  check_bad("estimate --model " + kLlama + " --hardware b200 --gpus 8 --global-batch 16 --framework megatron "
            "--moe-dispatcher hybridep",
            {"--moe-dispatcher", "is dense"});
  check_bad("estimate --model " + kV3 + " --hardware b200 --gpus 256 --global-batch 4096 --pp 8 --tp 2 "
            "--sequence-parallel --ep 16 --etp 2 --framework megatron --moe-dispatcher deepep",
            {"--etp", "deepep", "--moe-dispatcher alltoall"});
  check_bad("plan --model " + kV3 + " --hardware b200 --gpus 256 --global-batch 4096 --moe-dispatcher deepep "
            "--export deepspeed",
            {"--moe-dispatcher", "framework deepspeed"});
}
