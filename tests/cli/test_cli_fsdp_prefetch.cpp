// CLI of --fsdp-forward-prefetch / --fsdp-backward-prefetch: help text, FSDP's defaults, the exposed
// ZeRO-3 traffic each setting adds, the plan-file keys read back, and the one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/llama-2-7b.yaml");

std::string est(const std::string& rest) {
  return "estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 --seq 2048 "
         "--zero 3 --micro-batch 1 --framework fsdp --format json " + rest;
}
}  // namespace

TEST_CASE("estimate, plan and simulate --help state FSDP's prefetch flags") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--fsdp-forward-prefetch") != std::string::npos);
    CHECK(h.out.find("--fsdp-backward-prefetch") != std::string::npos);
    CHECK(h.out.find("BACKWARD_POST") != std::string::npos);
  }
}

TEST_CASE("FSDP prefetch flags: each setting exposes more of the ZeRO-3 traffic, and the plan file keeps it") {
  CliResult def = run_cli(est(""));
  CliResult fwd = run_cli(est("--fsdp-forward-prefetch on --fsdp-backward-prefetch pre"));
  CliResult off = run_cli(est("--fsdp-forward-prefetch off"));
  const std::string plan = scratch_dir() + "/fsdp-post-plan.json";
  CliResult post = run_cli(est("--fsdp-forward-prefetch off --fsdp-backward-prefetch post --output " + plan));
  CliResult none = run_cli(est("--fsdp-forward-prefetch off --fsdp-backward-prefetch none"));
  for (const CliResult* r : {&def, &fwd, &off, &post, &none}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  // The defaults (forward prefetch, BACKWARD_PRE: what the fsdp export runs) write no key.
  CHECK(def.out.find("fsdp_") == std::string::npos);
  CHECK(fwd.out.find("fsdp_") == std::string::npos);
  CHECK(json_number(fwd.out, "dp_comm_s") == json_number(def.out, "dp_comm_s"));
  CHECK(json_number(off.out, "dp_comm_s") > json_number(def.out, "dp_comm_s"));
  CHECK(json_number(post.out, "dp_comm_s") > json_number(off.out, "dp_comm_s"));
  CHECK(json_number(none.out, "dp_comm_s") > json_number(post.out, "dp_comm_s"));
  const std::string j = slurp(plan);
  CHECK(j.find("\"fsdp_backward_prefetch\": \"post\"") != std::string::npos);
  CHECK(j.find("\"fsdp_forward_prefetch\": false") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(post.out, "step_s"));
}

TEST_CASE("FSDP prefetch flags outside --framework fsdp, or with a bad value: one line, exit 2") {
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 --zero 3 "
            "--fsdp-backward-prefetch post",
            {"--fsdp-backward-prefetch", "post", "PyTorch FSDP", "--framework fsdp"});
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 --zero 3 "
            "--framework torchtitan --fsdp-forward-prefetch on",
            {"--fsdp-forward-prefetch", "torchtitan"});
  const CliResult bad = run_cli(est("--fsdp-backward-prefetch later"));
  CHECK(bad.exit_code != 0);
}

TEST_CASE("a plan costed with FSDP1's prefetch settings is not exported as torchtitan's FSDP2 config") {
  const std::string base = "plan --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 2048 --framework fsdp --export fsdp";
  check_bad(base + " --fsdp-backward-prefetch post", {"--export fsdp", "fsdp_backward_prefetch", "post", "FSDP2"});
  check_bad(base + " --fsdp-forward-prefetch off", {"--export fsdp", "fsdp_forward_prefetch", "FSDP2"});
  CliResult ok = run_cli(base);
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
}

TEST_CASE("fsdp-model-code fms: slower than fused code, kept in the plan file, refused elsewhere and by --export fsdp") {
  CHECK(run_cli("estimate --help").out.find("--fsdp-model-code") != std::string::npos);
  CliResult fused = run_cli(est(""));
  const std::string plan = scratch_dir() + "/fsdp-fms-plan.json";
  CliResult fms = run_cli(est("--fsdp-model-code fms --output " + plan));
  for (const CliResult* r : {&fused, &fms}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  CHECK(json_number(fms.out, "compute_s") > json_number(fused.out, "compute_s"));
  CHECK(fused.out.find("fsdp_model_code") == std::string::npos);
  CHECK(slurp(plan).find("\"fsdp_model_code\": \"fms\"") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(fms.out, "step_s"));
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 --zero 3 "
            "--framework megatron --fsdp-model-code fms",
            {"--fsdp-model-code", "fms", "--framework fsdp"});
  check_bad("plan --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 16 --seq 2048 "
            "--framework fsdp --fsdp-model-code fms --export fsdp",
            {"--export fsdp", "fsdp_model_code", "fms"});
}
