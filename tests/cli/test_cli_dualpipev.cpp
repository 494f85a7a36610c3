// --schedule dualpipev through the CLI: estimate (v = 2 by default), plan files, simulate's checks, the
// framework rules (torchtitan without torch.compile, not Megatron) and the torchtitan export.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {

const std::string k8b = source_path("examples/models/llama-3-8b.yaml");

std::string job(const std::string& rest) {
  return "--model " + k8b + " --hardware h100-80gb-sxm --gpus 32 --global-batch 64 --seq 4096 --tp 2 --pp 4 " + rest;
}

}  // namespace

TEST_CASE("estimate --schedule dualpipev: two chunks per rank by default and the plan file round-trips") {
  CliResult r = run_cli("estimate " + job("--schedule dualpipev"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("schedule=dualpipev v=2") != std::string::npos);
  const std::string plan = scratch_dir() + "/dualpipev-plan.json";
  REQUIRE(run_cli("estimate " + job("--schedule dualpipev --output " + plan)).exit_code == 0);
  const std::string text = slurp(plan);
  CHECK(text.find("\"schedule\": \"dualpipev\"") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan);
  REQUIRE(back.exit_code == 0);
  CHECK(back.out == r.out);
}

TEST_CASE("estimate --schedule dualpipev refuses other chunk counts and too few micro-batches and one rank") {
  check_bad("estimate " + job("--schedule dualpipev --virtual-stages 3"), {"--virtual-stages", "3", "two model chunks"});
  check_bad("estimate " + job("--schedule dualpipev --micro-batch 4"), {"--micro-batch", "at least 2pp=8"});
  check_bad("estimate --model " + k8b + " --hardware h100-80gb-sxm --gpus 8 --global-batch 64 --seq 4096 "
            "--schedule dualpipev",
            {"--schedule", "pp >= 2"});
}

TEST_CASE("dualpipev under frameworks: torchtitan without torch.compile but not Megatron-LM") {
  REQUIRE(run_cli("estimate " + job("--schedule dualpipev --framework torchtitan --sequence-parallel")).exit_code == 0);
  check_bad("estimate " + job("--schedule dualpipev --framework torchtitan --sequence-parallel --torch-compile on"),
            {"--schedule", "torch.compile", "--torch-compile off"});
  check_bad("estimate " + job("--schedule dualpipev --framework megatron"),
            {"--schedule", "dualpipev", "not a schedule under --framework megatron"});
  CliResult t = run_cli("plan " + job("--schedule dualpipev --framework torchtitan --no-progress --export torchtitan"));
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("pipeline_parallel_schedule = \"DualPipeV\"") != std::string::npos);
  CHECK(t.out.find("pipeline_parallel_layers_per_stage = 4") != std::string::npos);  // 32 layers, 8 stages
}

TEST_CASE("plan --schedule dualpipev searches it and simulate passes every check") {
  CliResult p = run_cli("plan --model " + k8b + " --hardware h100-80gb-sxm --gpus 32 --global-batch 64 --seq 4096 "
                        "--framework torchtitan --schedule dualpipev --no-progress --format json");
  INFO(p.err);
  REQUIRE(p.exit_code == 0);
  CHECK(p.out.find("\"schedule\": \"dualpipev\"") != std::string::npos);
  CliResult s = run_cli("simulate " + job("--schedule dualpipev"));
  INFO(s.out << s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(s.out.find("[FAIL]") == std::string::npos);
  CHECK(s.out.find("[ok] bubble: equal stages, free transfers: simulated 0.03030 vs closed form 0.03030 (dualpipev)") !=
        std::string::npos);
}
