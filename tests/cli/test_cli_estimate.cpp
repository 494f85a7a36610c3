// `meshplan estimate` and `scale` end to end: DESIGN.md keys, determinism, plan files, every example.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using nlohmann::json;

static const std::string kModel = source_path("examples/models/llama-2-7b.yaml");
static const std::string kArgs = "estimate --model " + kModel +
                                 " --hardware a100-80gb-sxm --gpus 16 --global-batch 64 --seq 4096"
                                 " --tp 2 --pp 2 --zero 1 --micro-batch 1 --recompute selective"
                                 " --sequence-parallel";

static json parse_ok(const CliResult& r) {
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  json j = json::parse(r.out, nullptr, false);
  REQUIRE_FALSE(j.is_discarded());
  return j;
}

TEST_CASE("help of every subcommand exits 0") {
  for (const char* cmd : {"estimate", "plan", "simulate", "run", "calibrate", "scale", "validate"}) {
    INFO(cmd);
    CliResult r = run_cli(std::string(cmd) + " --help");
    CHECK(r.exit_code == 0);
    CHECK(r.out.find("Usage") != std::string::npos);
  }
  CHECK(run_cli("--help").exit_code == 0);
  CHECK(run_cli("--version").exit_code == 0);
}

TEST_CASE("estimate JSON carries every DESIGN.md key") {
  json j = parse_ok(run_cli(kArgs + " --format json"));
  CHECK(j["schema"] == "meshplan.estimate/1");
  for (const char* k : {"tp", "pp", "dp", "zero_stage", "micro_batch_size", "num_micro_batches", "recompute",
                        "sequence_parallel", "schedule", "virtual_stages"})
    CHECK(j["config"].contains(k));
  for (const char* k : {"peak_bytes", "weights_bytes", "gradients_bytes", "optimizer_bytes",
                        "activations_bytes", "other_bytes"})
    CHECK(j["memory"][k].is_number());
  for (const char* k : {"step_s", "compute_s", "tp_comm_s", "pp_comm_s", "pp_bubble_s", "dp_comm_s", "optimizer_s"})
    CHECK(j["time"][k].is_number());
  for (const char* k : {"tokens_per_s", "tflops_per_gpu", "mfu", "hfu"}) CHECK(j["throughput"][k].is_number());
  CHECK(j["fits"].is_boolean());
  CHECK(j["provenance"]["tool"] == "meshplan");
  CHECK(j["provenance"].contains("git_sha"));
  CHECK(j["job"]["bytes_per_param"]["total"] == 16);
  // The configuration is the one asked for, DP derived as gpus / (tp*pp).
  CHECK(j["config"]["tp"] == 2);
  CHECK(j["config"]["pp"] == 2);
  CHECK(j["config"]["dp"] == 4);
  CHECK(j["config"]["num_micro_batches"] == 16);
  CHECK(j["config"]["recompute"] == "selective");
  CHECK(j["config"]["sequence_parallel"] == true);
  CHECK(j["memory"]["peak_bytes"].get<double>() > 0);
  CHECK(j["time"]["step_s"].get<double>() > 0);
}

TEST_CASE("same input gives byte-identical output in every format") {
  for (const char* fmt : {"table", "json", "yaml"}) {
    INFO(fmt);
    CliResult a = run_cli(kArgs + " --format " + fmt);
    CliResult b = run_cli(kArgs + " --format " + fmt);
    REQUIRE(a.exit_code == 0);
    CHECK_FALSE(a.out.empty());
    CHECK(a.out == b.out);
  }
  const std::string p1 = scratch_dir() + "/det1.json", p2 = scratch_dir() + "/det2.json";
  REQUIRE(run_cli(kArgs + " --output " + p1).exit_code == 0);
  REQUIRE(run_cli(kArgs + " --output " + p2).exit_code == 0);
  CHECK(slurp(p1) == slurp(p2));
}

TEST_CASE("YAML output has the same keys as JSON") {
  CliResult y = run_cli(kArgs + " --format yaml");
  REQUIRE(y.exit_code == 0);
  for (const char* k : {"schema: meshplan.estimate/1", "config:", "  tp: 2", "memory:", "  peak_bytes: ",
                        "time:", "  step_s: ", "throughput:", "  mfu: ", "fits: "})
    CHECK(y.out.find(k) != std::string::npos);
}

TEST_CASE("estimate --output writes a self-contained plan file that --plan reads back") {
  const std::string plan = scratch_dir() + "/plan.json";
  CliResult direct = run_cli(kArgs + " --format json --output " + plan);
  REQUIRE(direct.exit_code == 0);
  json p = json::parse(slurp(plan));
  CHECK(p["schema"] == "meshplan.plan/1");
  CHECK(p["problem"]["model"]["hidden_size"] == 4096);
  CHECK(p["problem"]["hardware"]["gpu"]["memory_gb"] == 85.899);
  CHECK(p["problem"]["job"]["gpus"] == 16);
  REQUIRE(p["candidates"].size() == 1);
  CHECK(p["candidates"][0]["schema"] == "meshplan.estimate/1");
  CHECK(p["searched"] == 1);
  CHECK(p["rejected"].is_object());
  // Reading the plan back reproduces the estimate byte for byte.
  CliResult again = run_cli("estimate --plan " + plan + " --candidate 0 --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == direct.out);
  // Config flags override the candidate; DP and micro-batches are re-derived.
  json o = parse_ok(run_cli("estimate --plan " + plan + " --tp 4 --format json"));
  CHECK(o["config"]["tp"] == 4);
  CHECK(o["config"]["dp"] == 2);
  CHECK(o["config"]["recompute"] == "selective");
}

TEST_CASE("seq defaults to max_position_embeddings of the model") {
  json j = parse_ok(run_cli("estimate --model " + kModel + " --hardware a100-80gb-sxm --gpus 8 --global-batch 8 --format json"));
  CHECK(j["job"]["seq_len"] == 4096);
}

TEST_CASE("every example model and every shipped profile runs through estimate") {
  for (const auto& e : std::filesystem::directory_iterator(source_path("examples/models"))) {
    INFO(e.path());
    CliResult r = run_cli("estimate --model " + e.path().string() +
                          " --hardware a100-80gb-sxm --gpus 8 --global-batch 8 --seq 2048 --format json");
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
  for (const auto& e : std::filesystem::directory_iterator(source_path("hardware-profiles"))) {
    if (e.path().extension() != ".yaml") continue;
    INFO(e.path());
    CliResult r = run_cli("estimate --model " + kModel + " --hardware " + e.path().stem().string() +
                          " --gpus 8 --global-batch 8");
    INFO(r.err);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("scale allocates a 1e21 budget at 20 tokens/parameter and by Approach 3") {
  json j = parse_ok(run_cli("scale --compute 1e21 --format json"));
  CHECK(j["schema"] == "meshplan.scale/1");
  const json& rule = j["allocations"][0];
  CHECK(rule["parameters"].get<double>() == Approx(2.88675e9).epsilon(1e-5));  // sqrt(1e21 / 120)
  CHECK(rule["tokens"].get<double>() == Approx(5.7735e10).epsilon(1e-5));
  CHECK(rule["tokens_per_parameter"] == 20);
  CHECK(j["allocations"][1]["rule"] == "hoffmann2022_approach3");
  CHECK(j["allocations"][1]["flops_6nd"].get<double>() == Approx(1e21).epsilon(1e-5));
}

TEST_CASE("scale from a cluster budget reports training days") {
  json j = parse_ok(run_cli("scale --hardware h100-80gb-sxm --gpus 1024 --days 30 --mfu 0.4 --format json"));
  // 1024 GPUs x 989e12 FLOP/s x 0.4 x 30 days x 86400 s
  CHECK(j["budget"]["flops"].get<double>() == Approx(1024 * 989e12 * 0.4 * 30 * 86400).epsilon(1e-5));
  CHECK(j["allocations"][0]["training_days"].get<double>() == Approx(30).epsilon(1e-5));
  CliResult t = run_cli("scale --compute 8.4e23 --hardware a100-80gb-sxm --gpus 2048");
  CHECK(t.exit_code == 0);
  CHECK(t.out.find("days") != std::string::npos);
}

TEST_CASE("estimate --attention: fused by default, recorded in job.attention and the plan file, materialized stashes s x s") {
  const std::string m = source_path("examples/models/llama-3-8b.yaml");
  const std::string base = "estimate --model " + m + " --hardware h100-80gb-sxm --gpus 8 --global-batch 8 --seq 8192"
                           " --zero 3 --format json";
  const json fused = parse_ok(run_cli(base));
  CHECK(fused["job"]["attention"] == "fused");
  const json mat = parse_ok(run_cli(base + " --attention materialized"));
  CHECK(mat["job"]["attention"] == "materialized");
  // 32 layers x (2 x 32 x 8192^2 - 4 x 32 x 8192) bytes more (tests/costmodel/test_attention.cpp).
  CHECK(mat["memory"]["activations_bytes"].get<double>() - fused["memory"]["activations_bytes"].get<double>() ==
        32.0 * (4294967296.0 - 1048576.0));
  const std::string help = run_cli("estimate --help").out + run_cli("plan --help").out + run_cli("simulate --help").out;
  CHECK(help.find("--attention") != std::string::npos);
  // The plan file records it, and --plan reads it back (an explicit --attention overrides).
  const std::string plan = scratch_dir() + "/attention-plan.json";
  REQUIRE(run_cli(base + " --attention materialized --output " + plan).exit_code == 0);
  CHECK(json::parse(slurp(plan))["problem"]["job"]["attention"] == "materialized");
  CHECK(parse_ok(run_cli("estimate --format json --plan " + plan))["job"]["attention"] == "materialized");
  CHECK(parse_ok(run_cli("estimate --format json --attention fused --plan " + plan))["job"]["attention"] == "fused");
  const CliResult bad = run_cli(base + " --attention flash");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("--attention") != std::string::npos);
}

TEST_CASE("a megatron plan read back keeps the framework's attention kernel (cuDNN on H100)") {
  // Issue 10: --framework megatron attends through TE's cuDNN kernel, faster on H100 than the
  // FlashAttention-2 of --framework torchtitan; --plan must rebuild the same knobs from the framework.
  const std::string m = source_path("examples/models/llama-3-8b.yaml");
  const std::string base = "estimate --model " + m + " --hardware h100-80gb-sxm --gpus 8 --global-batch 8 --seq 8192"
                           " --tp 8 --sequence-parallel --format json";
  const std::string plan = scratch_dir() + "/megatron-kernel-plan.json";
  const CliResult direct = run_cli(base + " --framework megatron --output " + plan);
  REQUIRE(direct.exit_code == 0);
  const CliResult again = run_cli("estimate --format json --plan " + plan);
  REQUIRE(again.exit_code == 0);
  CHECK(again.out == direct.out);
  const json titan = parse_ok(run_cli(base + " --framework torchtitan"));
  CHECK(json::parse(direct.out)["time"]["compute_s"].get<double>() < titan["time"]["compute_s"].get<double>());
}
