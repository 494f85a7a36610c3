// Every bad input of issue 2 gives exactly one stderr line naming file, field, value and a hint; exit 2.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"
#include "meshplan_version.h"

using namespace meshplan_test;

static const std::string kModel = source_path("examples/models/llama-2-7b.yaml");

static std::string estimate_with(const std::string& model, const std::string& rest = "") {
  return "estimate --model " + model + " --hardware a100-80gb-sxm --gpus 8 --global-batch 64 " + rest;
}

static std::string tiny(const std::string& extra) {
  return "hidden_size: 64\nnum_hidden_layers: 4\nnum_attention_heads: 4\nvocab_size: 256\n" + extra;
}

TEST_CASE("missing model file") {
  check_bad(estimate_with("/nonexistent/m.yaml"), {"--model", "/nonexistent/m.yaml", "no such file"});
}

TEST_CASE("YAML syntax error") {
  const std::string f = write_scratch("syntax.yaml", "hidden_size: 64\nnum_hidden_layers: [4\nvocab_size: 1\n");
  check_bad(estimate_with(f), {f, "line ", "YAML syntax error"});
}

TEST_CASE("missing required key") {
  const std::string f = write_scratch("missing.yaml", "hidden_size: 64\nnum_attention_heads: 4\nvocab_size: 256\n");
  check_bad(estimate_with(f), {f, "num_hidden_layers", "missing required key"});
}

TEST_CASE("wrong-typed key") {
  const std::string f = write_scratch("wrongtype.yaml",
                                      "hidden_size: sixty\nnum_hidden_layers: 4\nnum_attention_heads: 4\nvocab_size: 256\n");
  check_bad(estimate_with(f), {f, "hidden_size=sixty", "integer"});
}

TEST_CASE("negative size") {
  const std::string f = write_scratch("negative.yaml",
                                      "hidden_size: 64\nnum_hidden_layers: -4\nnum_attention_heads: 4\nvocab_size: 256\n");
  check_bad(estimate_with(f), {f, "num_hidden_layers=-4", "positive"});
}

TEST_CASE("zero size in a JSON config") {
  const std::string f = write_scratch("zero.json", "{\"n_embd\": 0, \"n_layer\": 2, \"n_head\": 2, \"vocab_size\": 10}");
  check_bad(estimate_with(f), {f, "n_embd=0", "positive"});
}

TEST_CASE("heads not dividing hidden") {
  const std::string f = write_scratch("heads.yaml",
                                      "hidden_size: 64\nnum_hidden_layers: 4\nnum_attention_heads: 6\nvocab_size: 256\n");
  check_bad(estimate_with(f), {f, "num_attention_heads=6", "hidden_size=64"});
}

TEST_CASE("GQA groups not dividing heads") {
  const std::string f = write_scratch("gqa.yaml", tiny("num_key_value_heads: 3\n"));
  check_bad(estimate_with(f), {f, "num_key_value_heads=3", "num_attention_heads=4"});
}

TEST_CASE("unknown hardware profile lists the shipped ones") {
  check_bad("estimate --model " + kModel + " --hardware a100-90gb --gpus 8 --global-batch 64",
            {"--hardware=a100-90gb", "unknown hardware profile", "a100-80gb-sxm"});
}

TEST_CASE("bad hardware profile file") {
  std::string text = slurp(source_path("hardware-profiles/a100-80gb-sxm.yaml"));
  REQUIRE(text.find("memory_gb: 85.899") != std::string::npos);
  text.replace(text.find("memory_gb: 85.899"), 17, "memory_gb: -80");
  const std::string f = write_scratch("hw.yaml", text);
  check_bad("estimate --model " + kModel + " --hardware " + f + " --gpus 8 --global-batch 64",
            {f, "gpu.memory_gb=-80"});
}

TEST_CASE("GPUs not divisible by TP*PP") {
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 12 --global-batch 64 --tp 8",
            {"--gpus=12", "tp*pp=8"});
}

TEST_CASE("TP larger than a node without --allow-tp-across-nodes") {
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 16 --global-batch 64 --tp 16",
            {"--tp=16", "gpus_per_node=8", "--allow-tp-across-nodes"});
  CliResult ok = run_cli("estimate --model " + kModel +
                         " --hardware a100-80gb-sxm --gpus 16 --global-batch 64 --tp 16 --allow-tp-across-nodes");
  CHECK(ok.exit_code == 0);
}

TEST_CASE("global batch not divisible by DP*micro-batch") {
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 60 --micro-batch 4",
            {"--global-batch=60", "dp*micro_batch=8*4"});
}

TEST_CASE("missing required flag, bad enum, bad format, bad number") {
  check_bad("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8", {"--global-batch", "required"});
  check_bad(estimate_with(kModel, "--recompute some"), {"--recompute=some"});
  check_bad(estimate_with(kModel, "--schedule zigzag"), {"--schedule=zigzag"});
  check_bad(estimate_with(kModel, "--format xml"), {"--format=xml"});
  check_bad(estimate_with(kModel, "--bytes-per-param 17"), {"--bytes-per-param=17"});
  check_bad(estimate_with(kModel, "--dtype fp4"), {"--dtype=fp4", "bf16"});
  check_bad(estimate_with(kModel, "--tp x"), {"--tp"});
  check_bad(estimate_with(kModel, "--no-such-flag"), {"--no-such-flag"});
}

TEST_CASE("bad plan inputs") {
  check_bad("estimate --plan /nonexistent/plan.json", {"--plan=/nonexistent/plan.json"});
  check_bad("estimate --plan " + kModel, {kModel, "JSON"});
  const std::string plan = scratch_dir() + "/errors-plan.json";
  REQUIRE(run_cli(estimate_with(kModel, "--output " + plan)).exit_code == 0);
  check_bad("estimate --plan " + plan + " --candidate 5", {"--candidate=5"});
  check_bad("estimate --plan " + plan + " --model " + kModel, {"--model", "--plan"});
}

TEST_CASE("scale bad inputs") {
  check_bad("scale", {"--compute", "required"});
  check_bad("scale --compute -1", {"--compute=-1"});
  check_bad("scale --hardware h100-80gb-sxm --gpus 8", {"--days"});
  check_bad("scale --hardware h100-80gb-sxm --gpus 8 --days 3 --mfu 1.5", {"--mfu=1.5"});
  check_bad("scale --hardware nope --gpus 8 --days 3", {"--hardware=nope"});
}

TEST_CASE("version prints version and git commit and help shows allowed values and defaults and required flags and units") {
  const CliResult v = run_cli("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out.find(MESHPLAN_VERSION) != std::string::npos);
  CHECK(v.out.find("(") != std::string::npos);  // "(<git sha>)"
  const CliResult e = run_cli("estimate --help");
  CHECK(e.exit_code == 0);
  CHECK(e.out.find("{none|selective|full}") != std::string::npos);
  CHECK(e.out.find("{gpipe|1f1b|interleaved|zb-h1|dualpipev}") != std::string::npos);
  CHECK(e.out.find("{table|json|yaml}") != std::string::npos);
  CHECK(e.out.find("(default 1f1b)") != std::string::npos);
  CHECK(e.out.find("(required unless --plan)") != std::string::npos);
  CHECK(e.out.find("Sequence length in tokens") != std::string::npos);
  const CliResult p = run_cli("plan --help");
  CHECK(p.out.find("{step-time|tokens-per-s|mfu|cost}") != std::string::npos);
  CHECK(p.out.find("{megatron|deepspeed|fsdp|torchtitan|nemo|slurm|torchrun|mpirun|srun}") != std::string::npos);
  CHECK(p.out.find("{megatron|deepspeed|fsdp|torchtitan|nemo|meshplan}") != std::string::npos);
  CHECK(p.out.find("{fused|materialized}") != std::string::npos);
  CHECK(e.out.find("Model chunks per pipeline rank (interleaved; dualpipev: always 2, set when left out) (default 1)") != std::string::npos);  // captured
  const CliResult r = run_cli("run --help");
  CHECK(r.out.find("Number of ranks") != std::string::npos);
  CHECK(r.out.find("{cpu|cuda}") != std::string::npos);
  CHECK(r.out.find("on MPI ranks (CPU or CUDA backend)") != std::string::npos);
}
