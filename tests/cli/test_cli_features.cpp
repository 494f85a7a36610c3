// CLI of context parallelism, FP8 recipes and gradient compression: flags, JSON, one-line refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

static const std::string kModel = source_path("examples/models/llama-2-7b.yaml");

static std::string est(const std::string& hw, const std::string& rest) {
  return "estimate --model " + kModel + " --hardware " + hw + " --gpus 16 --global-batch 16 " + rest;
}

TEST_CASE("estimate --cp: DP = gpus / (tp*cp*pp) and config carries cp and plan file round-trips") {
  const std::string plan = scratch_dir() + "/cp-plan.json";
  CliResult r = run_cli(est("h100-80gb-sxm", "--seq 32768 --tp 2 --cp 4 --format json --output " + plan));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string j = slurp(plan);
  CHECK(j.find("\"dp\": 2") != std::string::npos);
  CHECK(j.find("\"cp\": 4") != std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(again.out.find("\"cp\": 4") != std::string::npos);
  // cp = 1 writes no cp key (outputs without CP are unchanged).
  CliResult one = run_cli(est("h100-80gb-sxm", "--seq 4096 --tp 2 --format json"));
  REQUIRE(one.exit_code == 0);
  CHECK(one.out.find("\"cp\"") == std::string::npos);
}

TEST_CASE("CP and FP8 and compression refusals are one line and exit 2") {
  check_bad(est("h100-80gb-sxm", "--seq 4100 --cp 4"), {"--cp", "2*cp=8"});
  check_bad(est("h100-80gb-sxm", "--seq 32768 --cp 3"), {"--gpus", "tp*cp*pp=3"});
  check_bad(est("h100-80gb-sxm", "--seq 32768 --cp 2 --attention materialized"), {"--cp", "fused"});
  check_bad(est("a100-80gb-sxm", "--fp8 delayed"), {"--fp8", "delayed", "a100-80gb-sxm"});
  check_bad(est("h100-80gb-sxm", "--grad-compression powersgd:4 --zero 1"), {"--grad-compression", "powersgd:4"});
  check_bad(est("h100-80gb-sxm", "--grad-compression topk:3"), {"--grad-compression", "topk:3"});
  check_bad(est("h100-80gb-sxm", "--grad-compression gzip"), {"--grad-compression", "gzip"});
}

TEST_CASE("fp8 flag speeds up the step on H100 and the Megatron export writes the FP8 flags") {
  CliResult bf = run_cli(est("h100-80gb-sxm", "--seq 4096 --format json"));
  CliResult f8 = run_cli(est("h100-80gb-sxm", "--seq 4096 --fp8 current --format json"));
  REQUIRE(bf.exit_code == 0);
  REQUIRE(f8.exit_code == 0);
  CHECK(f8.out.find("\"fp8\": \"current\"") != std::string::npos);
  auto step = [](const std::string& j) {
    const size_t at = j.find("\"step_s\": ");
    return std::stod(j.substr(at + 10));
  };
  CHECK(step(f8.out) < step(bf.out));
  CliResult ex = run_cli("plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 16 --global-batch 64 --seq 65536 "
                         "--fp8 delayed --export megatron");
  INFO(ex.err);
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("--fp8-format hybrid") != std::string::npos);
  CHECK(ex.out.find("--fp8-recipe delayed") != std::string::npos);
  CHECK(ex.out.find("--context-parallel-size") != std::string::npos);  // 64K tokens: CP wins
}

TEST_CASE("plan searches CP only for long sequences - --cp narrows it") {
  CliResult shortseq = run_cli("plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 16 --global-batch 64 "
                               "--seq 4096 --format json --top 50");
  REQUIRE(shortseq.exit_code == 0);
  CHECK(shortseq.out.find("\"cp\"") == std::string::npos);
  CliResult pinned = run_cli("plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 16 --global-batch 64 "
                             "--seq 65536 --cp 4 --format json --top 3");
  INFO(pinned.err);
  REQUIRE(pinned.exit_code == 0);
  CHECK(pinned.out.find("\"cp\": 4") != std::string::npos);
}

TEST_CASE("estimate reports the compressed reduction and the CP ring") {
  CliResult r = run_cli(est("h100-80gb-sxm", "--seq 4096 --grad-compression onebit-adam --format json"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"grad_compression\": \"onebit-adam\"") != std::string::npos);
  CHECK(r.out.find("\"warmup_steps\": 100000") != std::string::npos);
  CliResult cp = run_cli(est("h100-80gb-sxm", "--seq 32768 --tp 2 --cp 4 --format json"));
  REQUIRE(cp.exit_code == 0);
  CHECK(cp.out.find("\"context_parallel\"") != std::string::npos);
  CHECK(cp.out.find("\"ring_steps\": 4") != std::string::npos);
  CliResult sim = run_cli("simulate --model " + kModel + " --hardware h100-80gb-sxm --gpus 16 --global-batch 16 "
                          "--seq 32768 --tp 2 --cp 4 --format json");
  INFO(sim.err);
  REQUIRE(sim.exit_code == 0);
  CHECK(sim.out.find("\"cp_ring\"") != std::string::npos);
}

TEST_CASE("attention kernel flag: the framework's kernel by default, the flag's in JSON and the plan file") {
  const std::string plan = scratch_dir() + "/kernel-plan.json";
  const std::string base = "estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 8 --seq 4096 --framework fsdp --zero 3 --format json";
  CliResult def = run_cli(base);
  CliResult tri = run_cli(base + " --attention-kernel triton --output " + plan);
  REQUIRE(def.exit_code == 0);
  REQUIRE(tri.exit_code == 0);
  CHECK(def.out.find("attention_kernel") == std::string::npos);  // framework default: key absent
  const std::string j = slurp(plan);
  CHECK(j.find("\"attention_kernel\": \"triton\"") != std::string::npos);
  auto step = [](const std::string& out) {
    const size_t at = out.find("\"step_s\"");
    REQUIRE(at != std::string::npos);
    return std::stod(out.substr(out.find(':', at) + 1));
  };
  CHECK(step(slurp(plan)) > step(def.out));  // Triton is the slower kernel at 4k on A100
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(back.exit_code == 0);
  CHECK(step(back.out) == Approx(step(slurp(plan))));
  CliResult over = run_cli("estimate --plan " + plan + " --attention-kernel flash2 --format json");
  REQUIRE(over.exit_code == 0);
  CHECK(step(over.out) == Approx(step(def.out)));
  check_bad(base + " --attention-kernel xformers", {"--attention-kernel", "xformers"});
}

TEST_CASE("estimate --moe-a2a-overlap hides the EP all-to-all, round-trips through the plan file, refusals in one line") {
  const std::string moe = source_path("examples/models/qwen3-30b-a3b.json");
  // Micro-batch 4: at 1 this eager layer waits on the host to issue its kernels, and hiding the
  // all-to-all gains nothing (costmodel/host_launch.h; tested in test_host_launch.cpp).
  const std::string base = "estimate --model " + moe + " --hardware h100-80gb-sxm --gpus 16 --global-batch 1024 "
                           "--seq 4096 --framework megatron --pp 2 --ep 8 --schedule interleaved --virtual-stages 2 "
                           "--micro-batch 4 ";
  const std::string plan = scratch_dir() + "/a2a-plan.json";
  CliResult off = run_cli(base + "--format json");
  CliResult on = run_cli(base + "--moe-a2a-overlap --format json --output " + plan);
  INFO(on.err);
  REQUIRE(off.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  CHECK(json_number(off.out, "tp_comm_s") > 0.0);  // the dispatch/combine all-to-all, exposed
  CHECK(json_number(on.out, "tp_comm_s") < json_number(off.out, "tp_comm_s"));
  CHECK(json_number(on.out, "step_s") < json_number(off.out, "step_s"));
  CHECK(slurp(plan).find("\"moe_a2a_overlap\": true") != std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(json_number(again.out, "step_s") == Approx(json_number(on.out, "step_s")));
  CHECK(off.out.find("moe_a2a_overlap") == std::string::npos);
  CliResult text = run_cli("estimate --plan " + plan);
  CHECK(text.out.find("EP all-to-all overlapped") != std::string::npos);
  const std::string pp2 = "estimate --model " + moe + " --hardware h100-80gb-sxm --gpus 16 --global-batch 1024 "
                          "--seq 4096 --framework megatron --pp 2 --ep 8 ";
  check_bad(pp2 + "--moe-a2a-overlap", {"--moe-a2a-overlap", "virtual pipeline"});
  check_bad(base + "--moe-a2a-overlap --recompute full", {"--moe-a2a-overlap", "full recomputation"});
  check_bad("estimate --model " + moe + " --hardware h100-80gb-sxm --gpus 16 --global-batch 16 --framework deepspeed "
            "--ep 8 --moe-a2a-overlap", {"--moe-a2a-overlap", "deepspeed"});
  check_bad(est("h100-80gb-sxm", "--framework megatron --moe-a2a-overlap"), {"--moe-a2a-overlap", "dense"});
  const std::string plan_cmd = "plan --model " + moe + " --hardware h100-80gb-sxm --gpus 16 --global-batch 1024 "
                               "--seq 4096 --framework megatron --moe-a2a-overlap ";
  check_bad(plan_cmd + "--recompute full", {"--moe-a2a-overlap", "full recomputation"});
  check_bad(plan_cmd + "--ep 1", {"--moe-a2a-overlap", "expert parallelism"});
  CliResult ex = run_cli(base + "--moe-a2a-overlap --export slurm");
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("--overlap-moe-expert-parallel-comm") != std::string::npos);
  CHECK(ex.out.find("--delay-wgrad-compute") != std::string::npos);
}
