// CLI of --torch-compile: help text, eager vs compiled step, plan-file round trip, torchtitan export,
// one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/llama-3-8b.yaml");

std::string est(const std::string& rest) {
  return "estimate --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 --seq 8192 --zero 3 "
         "--micro-batch 2 --recompute full --framework torchtitan --format json " + rest;
}

double step_s(const std::string& json) {
  const size_t at = json.find("\"step_s\": ");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + 10));
}
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --torch-compile and its default") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--torch-compile") != std::string::npos);
    CHECK(h.out.find("default off") != std::string::npos);
  }
}

TEST_CASE("estimate --torch-compile: eager (torchtitan's default) is slower and the plan file keeps 'on'") {
  const std::string plan = scratch_dir() + "/torch-compile-plan.json";
  CliResult def = run_cli(est(""));
  CliResult off = run_cli(est("--torch-compile off"));
  CliResult on = run_cli(est("--torch-compile on --output " + plan));
  INFO(def.err << off.err << on.err);
  REQUIRE(def.exit_code == 0);
  REQUIRE(off.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  CHECK(def.out.find("torch_compile") == std::string::npos);  // the framework's default: no key
  CHECK(off.out.find("torch_compile") == std::string::npos);
  CHECK(step_s(off.out) == step_s(def.out));
  const std::string j = slurp(plan);
  CHECK(j.find("\"torch_compile\": true") != std::string::npos);
  // Llama 3 8B, b 2: 32 layers x (5.2 GB + 12.7 GB + 5.2 GB recomputed) at 3.35 TB/s x 0.76: ~0.29 s.
  CHECK(step_s(def.out) - step_s(j) > 0.2);
  CHECK(step_s(def.out) - step_s(j) < 0.4);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(step_s(back.out) == step_s(j));
  CliResult over = run_cli("estimate --plan " + plan + " --torch-compile off --format json");
  INFO(over.err);
  REQUIRE(over.exit_code == 0);
  CHECK(step_s(over.out) == step_s(def.out));
}

TEST_CASE("plan --export torchtitan writes [compile] enable = true only when compiled") {
  const std::string base = "plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 8192 --framework torchtitan --export torchtitan";
  CliResult eager = run_cli(base);
  CliResult compiled = run_cli(base + " --torch-compile on");
  INFO(eager.err << compiled.err);
  REQUIRE(eager.exit_code == 0);
  REQUIRE(compiled.exit_code == 0);
  CHECK(eager.out.find("[compile]") == std::string::npos);
  CHECK(compiled.out.find("[compile]\nenable = true") != std::string::npos);
}

TEST_CASE("estimate refuses --torch-compile outside torchtitan, or a bad value, in one line (exit 2)") {
  const std::string fsdp = "estimate --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 8192 --zero 3 --micro-batch 2 --framework fsdp --torch-compile off";
  for (const std::string& args : {fsdp, est("--torch-compile yes")}) {
    INFO("meshplan " << args);
    CliResult r = run_cli(args);
    INFO("stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
    CHECK(r.err.find("--torch-compile") != std::string::npos);
    CHECK(r.out.empty());
  }
}
