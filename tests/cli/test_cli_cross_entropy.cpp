// CLI of --cross-entropy: help text, the framework's default, the plan-file key, Megatron's
// --cross-entropy-loss-fusion in the export, one-line refusal; and --cp-comm torch_all_gather's
// framework rule and torchtitan default.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kModel = source_path("examples/models/llama-3-8b.yaml");

std::string est(const std::string& rest) {
  return "estimate --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 --seq 4096 "
         "--tp 2 --micro-batch 1 --framework megatron --format json " + rest;
}

double step_s(const std::string& json) {
  const size_t at = json.find("\"step_s\": ");
  REQUIRE(at != std::string::npos);
  return std::stod(json.substr(at + 10));
}
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --cross-entropy and each framework's default") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--cross-entropy") != std::string::npos);
    CHECK(h.out.find("unfused for megatron, fused for nemo") != std::string::npos);
  }
}

TEST_CASE("estimate --cross-entropy: Megatron's default is unfused, fused is faster and kept in the plan file") {
  const std::string plan = scratch_dir() + "/cross-entropy-plan.json";
  CliResult def = run_cli(est(""));
  CliResult unfused = run_cli(est("--cross-entropy unfused"));
  CliResult fused = run_cli(est("--cross-entropy fused --output " + plan));
  INFO(def.err << unfused.err << fused.err);
  REQUIRE(def.exit_code == 0);
  REQUIRE(unfused.exit_code == 0);
  REQUIRE(fused.exit_code == 0);
  CHECK(def.out.find("cross_entropy") == std::string::npos);  // the framework's own: no key
  CHECK(step_s(unfused.out) == step_s(def.out));
  const std::string j = slurp(plan);
  CHECK(j.find("\"cross_entropy\": \"fused\"") != std::string::npos);
  // 4 micro-batches of 4096 tokens x 128256 / 2 logits, 16 bytes fewer forward: ~4 x 4.2 GB at
  // 3.35 TB/s x 0.76 = ~6.6 ms on the last (only) stage.
  CHECK(step_s(def.out) - step_s(j) > 0.004);
  CHECK(step_s(def.out) - step_s(j) < 0.010);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(step_s(back.out) == step_s(j));
}

TEST_CASE("plan --export megatron asks for --cross-entropy-loss-fusion only when costed fused") {
  const std::string base = "plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 4096 --export megatron";
  CliResult def = run_cli(base);
  CliResult fused = run_cli(base + " --cross-entropy fused");
  INFO(def.err << fused.err);
  REQUIRE(def.exit_code == 0);
  REQUIRE(fused.exit_code == 0);
  CHECK(def.out.find("--cross-entropy-loss-fusion") == std::string::npos);
  CHECK(fused.out.find("--cross-entropy-loss-fusion") != std::string::npos);
}

TEST_CASE("estimate --cross-entropy te and te_inplace: Transformer Engine's kernels are cheaper than fused") {
  CliResult fused = run_cli(est("--cross-entropy fused"));
  CliResult te = run_cli(est("--cross-entropy te"));
  CliResult inplace = run_cli(est("--cross-entropy te_inplace"));
  INFO(fused.err << te.err << inplace.err);
  REQUIRE(fused.exit_code == 0);
  REQUIRE(te.exit_code == 0);
  REQUIRE(inplace.exit_code == 0);
  // 4 micro-batches x 4096 x 128256 / 2 logits: fused 36 bytes each, te 22, te_inplace 10.
  CHECK(step_s(te.out) < step_s(fused.out));
  CHECK(step_s(inplace.out) < step_s(te.out));
  CHECK(step_s(fused.out) - step_s(te.out) > 0.003);
  CHECK(step_s(te.out) - step_s(inplace.out) > 0.002);
  CHECK(te.out.find("\"cross_entropy\": \"te\"") != std::string::npos);
}

TEST_CASE("TE's cross entropy exports to nemo with its keys and is refused for megatron in one line") {
  const std::string base = "plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 4096 --cross-entropy te_inplace ";
  CliResult nemo = run_cli(base + "--framework nemo --export nemo");
  INFO(nemo.err);
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("cross_entropy_fusion_impl: te") != std::string::npos);
  check_bad(base + "--framework megatron --export megatron", {"cross_entropy", "te_inplace", "Megatron-LM"});
}

TEST_CASE("estimate refuses a bad --cross-entropy in one line (exit 2)") {
  check_bad(est("--cross-entropy triton"), {"--cross-entropy"});
}

TEST_CASE("estimate --cross-entropy flash_xentropy and --train-metric-cross-entropies: llm-foundry's loss and metrics") {
  const std::string plan = scratch_dir() + "/train-metrics-plan.json";
  const std::string fsdp = "estimate --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 4096 --micro-batch 1 --zero 3 --framework fsdp --format json ";
  CliResult generic = run_cli(fsdp);
  CliResult flash = run_cli(fsdp + "--cross-entropy flash_xentropy");
  CliResult metrics = run_cli(fsdp + "--cross-entropy flash_xentropy --train-metric-cross-entropies 2 --output " + plan);
  INFO(generic.err << flash.err << metrics.err);
  REQUIRE(generic.exit_code == 0);
  REQUIRE(flash.exit_code == 0);
  REQUIRE(metrics.exit_code == 0);
  // 2 micro-batches of 4096 x 128256 logits: generic 24 bytes each, flash-attn's 6, plus 28 for the metrics.
  CHECK(step_s(flash.out) < step_s(generic.out));
  CHECK(step_s(metrics.out) > step_s(generic.out));
  const std::string j = slurp(plan);
  CHECK(j.find("\"cross_entropy\": \"flash_xentropy\"") != std::string::npos);
  CHECK(j.find("\"train_metric_cross_entropies\": 2") != std::string::npos);
  CHECK(flash.out.find("train_metric_cross_entropies") == std::string::npos);  // 0: no key
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(step_s(back.out) == step_s(metrics.out));
  check_bad(fsdp + "--train-metric-cross-entropies -1", {"--train-metric-cross-entropies"});
}

TEST_CASE("llm-foundry's loss and Composer's train metrics are refused by every export in one line") {
  const std::string base = "plan --model " + kModel + " --hardware h100-80gb-sxm --gpus 8 --global-batch 16 "
                           "--seq 4096 ";
  for (const char* kind : {"fsdp", "torchtitan", "megatron", "deepspeed", "nemo"}) {
    INFO(kind);
    check_bad(base + "--cross-entropy flash_xentropy --export " + kind, {"cross_entropy", "flash_xentropy", "llm-foundry"});
    check_bad(base + "--train-metric-cross-entropies 2 --export " + kind, {"train_metric_cross_entropies", "Composer"});
  }
}

TEST_CASE("cp-comm torch_all_gather is torchtitan's: refused under another framework in one line") {
  const std::string model = source_path("examples/models/llama-3-8b.yaml");
  const std::string base = "estimate --model " + model + " --hardware h100-80gb-sxm --gpus 8 --global-batch 8 "
                           "--seq 32768 --cp 8 --zero 3 --cp-comm torch_all_gather";
  check_bad(base + " --framework megatron", {"--cp-comm", "torchtitan"});
  CliResult ok = run_cli(base + " --framework torchtitan --format json");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out.find("\"cp_comm\": \"torch_all_gather\"") != std::string::npos);
  // torchtitan's own exchange is the default under --framework torchtitan: the same estimate.
  const std::string tt = "estimate --model " + model + " --hardware h100-80gb-sxm --gpus 8 --global-batch 8 "
                         "--seq 32768 --cp 8 --zero 3 --framework torchtitan --format json";
  CliResult def = run_cli(tt);
  INFO(def.err);
  REQUIRE(def.exit_code == 0);
  CHECK(def.out.find("\"cp_comm\": \"torch_all_gather\"") != std::string::npos);
  CHECK(step_s(def.out) == step_s(ok.out));
}
