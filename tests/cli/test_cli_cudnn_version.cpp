// CLI of --cudnn-version: help text, the release's attention curve (faster with a newer cuDNN on GB200), the
// chosen curve embedded in the plan file, one-line refusal of a bad release number.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/llama-3-8b.yaml");

std::string est(const std::string& rest) {
  return "estimate --model " + kModel + " --hardware gb200-nvl72 --gpus 8 --global-batch 32 --seq 8192 "
         "--tp 1 --micro-batch 2 --framework megatron --format json " + rest;
}

double step_s(const std::string& json) { return json_number(json, "step_s"); }
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --cudnn-version") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--cudnn-version") != std::string::npos);
  }
}

TEST_CASE("estimate --cudnn-version: an older cuDNN's attention is slower and the plan file keeps the chosen curve") {
  CliResult old = run_cli(est("--cudnn-version 9.13.1"));
  CliResult mid = run_cli(est("--cudnn-version 9.18.0"));
  CliResult newest = run_cli(est(""));
  REQUIRE(old.exit_code == 0);
  REQUIRE(mid.exit_code == 0);
  REQUIRE(newest.exit_code == 0);
  CHECK(step_s(mid.out) < step_s(old.out));
  CHECK(step_s(newest.out) <= step_s(mid.out));
  const std::string plan = scratch_dir() + "/cudnn-version-plan.json";
  CliResult saved = run_cli(est("--cudnn-version 9.13.1 --output " + plan));
  REQUIRE(saved.exit_code == 0);
  // The attention curves alone (the profile's FP8 attention ratios, one cuDNN 9.22 measurement, follow them).
  const std::string file = slurp(plan);
  const size_t from = file.find("\"attention_kernel_speed\"");
  REQUIRE(from != std::string::npos);
  const std::string text = file.substr(from, file.find("\"fp8_attention_speedup\"", from) - from);
  CHECK(text.find("\"version\": \"9.13.0\"") != std::string::npos);
  CHECK(text.find("\"version\": \"9.22.0\"") == std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(step_s(again.out) == Approx(step_s(old.out)).epsilon(1e-6));
  // The plan keeps the curve it was made with: another release on top of it is refused, not ignored.
  CliResult over = run_cli("estimate --plan " + plan + " --cudnn-version 9.22.0 --format json");
  CHECK(over.exit_code == 2);
  CHECK(over.err.find("--cudnn-version") != std::string::npos);
}

TEST_CASE("estimate --cudnn-version with a bad release number: one line, exit 2") {
  CliResult bad = run_cli(est("--cudnn-version nine"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--cudnn-version") != std::string::npos);
  CHECK(bad.err.find("nine") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}
