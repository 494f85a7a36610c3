// CLI of GPT-OSS-style eager passes: a gpt_oss model under --framework megatron pays them, --fused-grouped-mlp
// removes the MoE ones, the plan file keeps the flag, the Megatron launch script passes it, refusals.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
// openai/gpt-oss-120b's shapes cut to 4 layers (the model class's defaults give swiglu_limit 7, YaRN 32,
// biased experts).
const char* kGptOss =
    "{model_type: gpt_oss, hidden_size: 2880, num_hidden_layers: 4, num_attention_heads: 64, num_key_value_heads: 8, "
    "head_dim: 64, intermediate_size: 2880, num_local_experts: 128, num_experts_per_tok: 4, attention_bias: true, "
    "vocab_size: 201088, max_position_embeddings: 131072, tie_word_embeddings: false}\n";

std::string job(const std::string& model) {
  return "estimate --model " + model +
         " --hardware h100-80gb-sxm --gpus 16 --global-batch 64 --seq 4096 --ep 8 --etp 1 --zero 1 ";
}
}  // namespace

TEST_CASE("gpt_oss under megatron pays the eager passes and --fused-grouped-mlp removes the expert ones") {
  const std::string model = write_scratch("gpt-oss-4l.yaml", kGptOss);
  CliResult eager = run_cli(job(model) + "--framework megatron --format json");
  CliResult fused = run_cli(job(model) + "--framework megatron --fused-grouped-mlp --format json");
  CliResult fsdp = run_cli(job(model) + "--framework meshplan --format json");
  for (const CliResult* r : {&eager, &fused, &fsdp}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  CHECK(json_number(fused.out, "compute_s") < json_number(eager.out, "compute_s"));
  CHECK(fused.out.find("\"fused_grouped_mlp\": true") != std::string::npos);
  CHECK(eager.out.find("fused_grouped_mlp") == std::string::npos);
}

TEST_CASE("fused grouped MLP flag: the plan file keeps it, the Megatron script passes it, other frameworks refuse it") {
  const std::string model = write_scratch("gpt-oss-4l-b.yaml", kGptOss);
  const std::string plan = scratch_dir() + "/fused-mlp-plan.json";
  CliResult out = run_cli(job(model) + "--framework megatron --fused-grouped-mlp --output " + plan);
  INFO(out.err);
  REQUIRE(out.exit_code == 0);
  CHECK(slurp(plan).find("\"fused_grouped_mlp\": true") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  CliResult direct = run_cli(job(model) + "--framework megatron --fused-grouped-mlp --format json");
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == Approx(json_number(direct.out, "step_s")));
  CliResult script = run_cli(job(model) + "--framework megatron --fused-grouped-mlp --export torchrun");
  REQUIRE(script.exit_code == 0);
  CHECK(script.out.find("--use-transformer-engine-op-fuser") != std::string::npos);
  CliResult bad = run_cli(job(model) + "--framework torchtitan --fused-grouped-mlp");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--fused-grouped-mlp") != std::string::npos);
  CHECK(bad.err.find('\n') == bad.err.size() - 1);
}
