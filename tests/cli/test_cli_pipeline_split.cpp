// CLI of the balanced pipeline split (planner/pipeline_balance.h): plan shows and exports it, --pipeline-split
// narrows to one split, frameworks with equal chunks never get it, and a bad value is one line, exit 2.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
std::string v3(const std::string& rest) {
  return "plan --model " + source_path("examples/models/deepseek-v3.json") +
         " --hardware gb200-nvl72 --gpus 256 --global-batch 4096 --seq 4096 --tp 1 --pp 16 --ep 8 --zero 1 "
         "--mtp-layers 1 --recompute selective --recompute-modules mla_up_proj --schedule 1f1b " + rest;
}
}  // namespace

TEST_CASE("plan --help states --pipeline-split") {
  CliResult h = run_cli("plan --help");
  REQUIRE(h.exit_code == 0);
  CHECK(h.out.find("--pipeline-split") != std::string::npos);
}

TEST_CASE("plan finds DeepSeek-V3's MTP layout and Megatron's export states it") {
  CliResult table = run_cli(v3("--framework megatron --top 3"));
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("1f1b [4x15,1]") != std::string::npos);
  CliResult meg = run_cli(v3("--framework megatron --export megatron"));
  INFO(meg.err);
  REQUIRE(meg.exit_code == 0);
  CHECK(meg.out.find("--pipeline-model-parallel-layout \"Et*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|t*4|"
                     "t*4|t*1mL\"") != std::string::npos);
  CliResult even = run_cli(v3("--framework megatron --pipeline-split even --format json"));
  INFO(even.err);
  REQUIRE(even.exit_code == 0);
  CHECK(even.out.find("\"layers_per_stage\": []") != std::string::npos);
  CHECK(even.out.find("\"layers_per_stage\": [4") == std::string::npos);
}

TEST_CASE("pipeline-split: NeMo plans keep equal chunks, a bad value is refused") {
  // 61 layers split into no equal chunks: NeMo's export carries no layout, so --pp 16 is refused by name.
  CliResult nemo = run_cli(v3("--framework nemo --top 3 --format json"));
  INFO(nemo.err);
  CHECK(nemo.exit_code == 2);
  CHECK(nemo.err.find("--pp=16: framework nemo needs num_hidden_layers=61 in equal pipeline chunks") != std::string::npos);
  CliResult bad = run_cli(v3("--framework megatron --pipeline-split lopsided"));
  CHECK(bad.exit_code == 2);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}

TEST_CASE("plan --pipeline-split embedding-loss finds Megatron-Bridge's Llama 3.1 405B layout, exported as E|...|L") {
  const std::string base = "plan --model " + source_path("examples/models/llama-3.1-405b.yaml") +
                           " --hardware gb200-nvl72 --gpus 256 --global-batch 1536 --seq 8192 --framework megatron "
                           "--fp8 mxfp8 --tp 4 --pp 16 --zero 1 --schedule interleaved --virtual-stages 8 ";
  CliResult table = run_cli(base + "--pipeline-split embedding-loss --top 1");
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("interleaved v=8 [0,1x126,0]") != std::string::npos);
  CliResult meg = run_cli(base + "--pipeline-split embedding-loss --export megatron");
  INFO(meg.err);
  REQUIRE(meg.exit_code == 0);
  std::string layout = "E";
  for (int i = 1; i < 127; ++i) layout += "|t*1";
  layout += "|L";
  CHECK(meg.out.find("--pipeline-model-parallel-layout \"" + layout + "\"") != std::string::npos);
  // The even split cannot hold 128 chunks of 126 layers: with it alone nothing is left, by name.
  CliResult even = run_cli(base + "--pipeline-split even");
  CHECK(even.exit_code == 2);
  CHECK(std::count(even.err.begin(), even.err.end(), '\n') == 1);
  CHECK(run_cli("plan --help").out.find("embedding-loss") != std::string::npos);
}

namespace {
// Llama 3 405B as its paper ran it at 16,384 GPUs: TP 8, PP 16, DP 128, batch 16 per DP group, V 8.
std::string llama3(const std::string& rest) {
  return "--model " + source_path("examples/models/llama-3.1-405b.yaml") +
         " --hardware h100-80gb-sxm --gpus 16384 --global-batch 2048 --seq 8192 --tp 8 --pp 16 --zero 2 "
         "--schedule interleaved --virtual-stages 8 --sequence-parallel " + rest;
}
}  // namespace

TEST_CASE("estimate and simulate --help state --pipeline-split") {
  for (const char* cmd : {"estimate", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--pipeline-split") != std::string::npos);
    CHECK(h.out.find("embedding-loss") != std::string::npos);
  }
}

TEST_CASE("estimate --pipeline-split embedding-loss runs Llama 3 405B over 128 chunks, the refusal names it") {
  // 126 layers cannot fill 128 chunks evenly: a one-line refusal whose hint names the split that can.
  CliResult even = run_cli("estimate " + llama3(""));
  CHECK(even.exit_code == 2);
  CHECK(std::count(even.err.begin(), even.err.end(), '\n') == 1);
  CHECK(even.err.find("--pipeline-split embedding-loss") != std::string::npos);
  CliResult table = run_cli("estimate " + llama3("--pipeline-split embedding-loss"));
  INFO(table.err);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("layers=0,1x126,0") != std::string::npos);
  CliResult json = run_cli("estimate " + llama3("--pipeline-split embedding-loss --format json"));
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"layers_per_stage\": [0, 1, 1,") != std::string::npos);
  // The paper's Table 4 gives 400 TFLOP/s per GPU (41 % MFU) for this layout; the bubble (P-1)/(V M) = 15/128.
  const double mfu = json_number(json.out, "mfu");
  CHECK(mfu > 0.35);
  CHECK(mfu < 0.47);
  // The same split given by hand is the same estimate.
  std::string hand = "0";
  for (int i = 0; i < 126; ++i) hand += ",1";
  hand += ",0";
  CliResult by_hand = run_cli("estimate " + llama3("--layers-per-stage " + hand + " --format json"));
  REQUIRE(by_hand.exit_code == 0);
  CHECK(json_number(by_hand.out, "step_s") == json_number(json.out, "step_s"));
  CliResult sim = run_cli("simulate " + llama3("--pipeline-split embedding-loss"));
  INFO(sim.err);
  CHECK(sim.exit_code == 0);
}

TEST_CASE("estimate --pipeline-split: one-line refusals with --layers-per-stage or an indivisible split") {
  CliResult both = run_cli("estimate " + llama3("--pipeline-split embedding-loss --layers-per-stage 1,2"));
  CHECK(both.exit_code == 2);
  CHECK(std::count(both.err.begin(), both.err.end(), '\n') == 1);
  CHECK(both.err.find("--layers-per-stage both give the split") != std::string::npos);
  // 128 slots over pp 16 x v 3 = 48 chunks do not divide.
  const std::string v3 = "--model " + source_path("examples/models/llama-3.1-405b.yaml") +
                         " --hardware h100-80gb-sxm --gpus 16384 --global-batch 2048 --seq 8192 --tp 8 --pp 16 "
                         "--zero 2 --schedule interleaved --virtual-stages 3 --sequence-parallel ";
  CliResult odd = run_cli("estimate " + v3 + "--pipeline-split embedding-loss");
  CHECK(odd.exit_code == 2);
  CHECK(std::count(odd.err.begin(), odd.err.end(), '\n') == 1);
  CHECK(odd.err.find("divisible by pp*v (48)") != std::string::npos);
  CliResult bad = run_cli("estimate " + llama3("--pipeline-split lopsided"));
  CHECK(bad.exit_code == 2);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
  CHECK(bad.err.find("unknown split") != std::string::npos);
}
