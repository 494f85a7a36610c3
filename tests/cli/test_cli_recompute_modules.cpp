// CLI of --recompute-modules (core/recompute_modules.h): help text, less memory than plain selective for
// DeepSeek-V3's mla_up_proj, the plan-file round trip, Megatron's and NeMo's keys, and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kV3 = source_path("examples/models/deepseek-v3.json");
const std::string kLlama = source_path("examples/models/llama-2-7b.yaml");

std::string v3(const std::string& rest) {
  return "estimate --model " + kV3 + " --hardware gb200-nvl72 --gpus 256 --global-batch 4096 --seq 4096 --pp 16 "
         "--ep 8 --etp 1 --zero 1 --framework megatron --format json " + rest;
}
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --recompute-modules") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--recompute-modules") != std::string::npos);
    CHECK(h.out.find("mla_up_proj") != std::string::npos);
  }
}

TEST_CASE("recompute-modules mla_up_proj keeps less than no recompute, and the plan file keeps it") {
  CliResult none = run_cli(v3(""));
  const std::string plan = scratch_dir() + "/recompute-modules-plan.json";
  CliResult up = run_cli(v3("--recompute selective --recompute-modules mla_up_proj,moe_act --output " + plan));
  for (const CliResult* r : {&none, &up}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  CHECK(none.out.find("recompute_modules") == std::string::npos);  // not given: no key
  CHECK(json_number(up.out, "activations_bytes") < 0.8 * json_number(none.out, "activations_bytes"));
  CHECK(json_number(up.out, "compute_s") > json_number(none.out, "compute_s"));
  CHECK(slurp(plan).find("\"recompute_modules\": [\"moe_act\", \"mla_up_proj\"]") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(up.out, "step_s"));
  CliResult table = run_cli("estimate --plan " + plan);
  CHECK(table.out.find("recompute=selective[moe_act,mla_up_proj]") != std::string::npos);
}

TEST_CASE("Megatron and NeMo exports name the recompute modules") {
  const std::string common = "plan --model " + source_path("examples/models/qwen3-30b-a3b.json") +
                             " --hardware b200 --gpus 8 --global-batch 256 --seq 4096 --tp 1 --pp 1 --ep 8 --zero 1 "
                             "--recompute selective --recompute-modules layernorm,moe_act ";
  CliResult meg = run_cli(common + "--framework megatron --export megatron");
  INFO(meg.err);
  REQUIRE(meg.exit_code == 0);
  CHECK(meg.out.find("--recompute-granularity selective") != std::string::npos);
  CHECK(meg.out.find("--recompute-modules moe_act layernorm") != std::string::npos);
  CliResult nemo = run_cli(common + "--export nemo");
  INFO(nemo.err);
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("recompute_modules: [moe_act, layernorm]") != std::string::npos);
}

TEST_CASE("recompute-modules refusals are one line and exit 2") {
  const std::string llama = "estimate --model " + kLlama + " --hardware h100-80gb-sxm --gpus 8 --global-batch 64 "
                            "--seq 4096 ";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"--framework megatron --recompute selective --recompute-modules mlp,attn", "attn"},
                        Case{"--recompute selective --recompute-modules mlp", "framework meshplan"},
                        Case{"--framework megatron --recompute none --recompute-modules mlp", "--recompute selective"},
                        Case{"--framework megatron --recompute selective --recompute-modules moe_act", "is dense"},
                        Case{"--framework megatron --recompute selective --recompute-modules mla_up_proj",
                             "multi-head latent attention"}}) {
    CliResult r = run_cli(llama + c.args);
    INFO(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
}

TEST_CASE("meshplan run refuses a plan with recompute modules in one line, exit 2") {
  const std::string plan = scratch_dir() + "/recompute-modules-run.json";
  CliResult est = run_cli("estimate --model " + source_path("examples/models/llama-tiny.yaml") +
                          " --hardware a100-80gb-sxm --gpus 1 --global-batch 4 --seq 128 --framework megatron "
                          "--recompute selective --recompute-modules mlp --output " + plan);
  INFO(est.err);
  REQUIRE(est.exit_code == 0);
  CliResult run = run_cli("run --plan " + plan + " --steps 1");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("recompute_modules=mlp") != std::string::npos);
  CHECK(std::count(run.err.begin(), run.err.end(), '\n') == 1);
}
