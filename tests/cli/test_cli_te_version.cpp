// CLI of --te-version: help text, MLA on Blackwell under an old Transformer Engine costed as TE's unfused attention
// (slower, said in a note, kept by the plan file), Hopper unaffected, one-line refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/deepseek-v3.json");

std::string est(const std::string& hardware, const std::string& rest) {
  return "estimate --model " + kModel + " --hardware " + hardware + " --gpus 128 --global-batch 1024 --seq 4096 "
         "--tp 2 --pp 4 --ep 32 --etp 1 --zero 1 --framework megatron --recompute selective --sequence-parallel "
         "--layers-per-stage 15,16,16,14 " + rest;
}

double step_s(const std::string& json) { return json_number(json, "step_s"); }
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --te-version") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--te-version") != std::string::npos);
  }
}

TEST_CASE("estimate --te-version 2.2: MLA on GB200 runs TE's unfused attention and says so") {
  CliResult old = run_cli(est("gb200-nvl72", "--te-version 2.2 --format json"));
  CliResult today = run_cli(est("gb200-nvl72", "--format json"));
  REQUIRE(old.exit_code == 0);
  REQUIRE(today.exit_code == 0);
  CHECK(old.out.find("\"attention\": \"materialized\"") != std::string::npos);
  CHECK(today.out.find("\"attention\": \"fused\"") != std::string::npos);
  CHECK(step_s(old.out) > 1.2 * step_s(today.out));  // scores and softmax through HBM at 64 heads x 4096^2
  CliResult table = run_cli(est("gb200-nvl72", "--te-version 2.2"));
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("materialized attention") != std::string::npos);
  CHECK(table.out.find("note: Transformer Engine does not run its cuDNN fused attention for head dims 192/128") !=
        std::string::npos);
  CHECK(run_cli(est("gb200-nvl72", "")).out.find("head dims 192/128") == std::string::npos);
  // cuDNN older than 9.11 refuses MLA on Blackwell too, whatever the TE release.
  CliResult old_cudnn = run_cli(est("gb200-nvl72", "--cudnn-version 9.10.2 --format json"));
  REQUIRE(old_cudnn.exit_code == 0);
  CHECK(old_cudnn.out.find("\"attention\": \"materialized\"") != std::string::npos);
}

TEST_CASE("estimate --te-version 2.2 on H100: Hopper's cuDNN takes MLA's heads, nothing changes") {
  CliResult old = run_cli(est("h100-80gb-sxm", "--te-version 2.2 --format json"));
  CliResult today = run_cli(est("h100-80gb-sxm", "--format json"));
  REQUIRE(old.exit_code == 0);
  REQUIRE(today.exit_code == 0);
  CHECK(step_s(old.out) == Approx(step_s(today.out)).epsilon(1e-12));
}

TEST_CASE("the plan file keeps the attention path an old TE took and refuses --te-version on top") {
  const std::string plan = scratch_dir() + "/te-version-plan.json";
  CliResult saved = run_cli(est("gb200-nvl72", "--te-version 2.2 --format json --output " + plan));
  REQUIRE(saved.exit_code == 0);
  CHECK(slurp(plan).find("\"te_attention\": \"unfused\"") != std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(step_s(again.out) == Approx(step_s(saved.out)).epsilon(1e-6));
  CHECK(run_cli("estimate --plan " + plan).out.find("note: Transformer Engine does not run") != std::string::npos);
  CliResult over = run_cli("estimate --plan " + plan + " --te-version 2.5 --format json");
  CHECK(over.exit_code == 2);
  CHECK(over.err.find("--te-version") != std::string::npos);
  // A plan file that says a framework without Transformer Engine took TE's fallback is refused, naming the key.
  std::string text = slurp(plan);
  for (size_t at = text.find("\"framework\": \"megatron\""); at != std::string::npos;
       at = text.find("\"framework\": \"megatron\"", at))
    text.replace(at, 23, "\"framework\": \"torchtitan\"");
  check_refusal(run_cli("estimate --plan " + write_scratch("te-version-torchtitan.json", text)), {"te_attention", "torchtitan"});
}

TEST_CASE("estimate --te-version with a bad release number: one line, exit 2") {
  CliResult bad = run_cli(est("gb200-nvl72", "--te-version two"));
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--te-version") != std::string::npos);
  CHECK(bad.err.find("two") != std::string::npos);
  CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
}
