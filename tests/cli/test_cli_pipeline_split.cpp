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
