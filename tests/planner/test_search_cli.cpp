// `meshplan plan` end to end: outputs parse and are deterministic, exports are valid, impossible
// problems print one line and exit 2; --ep/--etp on a dense model is refused (plan and estimate).
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <string>

#include "planner_test_util.h"
#include "skip.h"

using planner_test::CliResult;
using planner_test::require_one_line_exit_2;
using planner_test::sh;
using planner_test::slurp;

namespace {

const std::string kModels = std::string(MESHPLAN_SOURCE_DIR) + "/examples/models/";

CliResult plan(const std::string& model, const std::string& args) {
  return sh(std::string(MESHPLAN_BIN) + " plan --model " + kModels + model +
            ".yaml --hardware a100-80gb-sxm " + args);
}

// `meshplan <args>` for llama-2-7b (dense) on 8 H100s, global batch 8.
CliResult dense_7b(const std::string& args) {
  return sh(std::string(MESHPLAN_BIN) + " " + args + " --model " + kModels +
            "llama-2-7b.yaml --hardware h100-80gb-sxm --gpus 8 --global-batch 8");
}

// One line, exit 2, naming the expert flag and the dense model.
void require_dense_refusal(const CliResult& r, const std::string& flag) {
  require_one_line_exit_2(r);
  CHECK(r.err.find(flag) != std::string::npos);
  CHECK(r.err.find("is dense") != std::string::npos);
}

std::string python() {
  const std::string p = MESHPLAN_PYTHON;
  if (p.empty()) meshplan_test::skip("no python3 found at configure time");
  return p;
}

}  // namespace

TEST_CASE("cli plan: impossible problems give one line and exit 2") {
  SECTION("too big for the GPUs even fully sharded") {
    const CliResult r = plan("megatron-gpt-1t", "--gpus 64 --global-batch 64 --seq 2048");
    require_one_line_exit_2(r);
    CHECK(r.err.find("needs at least") != std::string::npos);
  }
  SECTION("prime GPU count above a node") {
    const CliResult r = plan("llama-2-13b", "--gpus 13 --global-batch 13 --seq 32768 --attention materialized");
    require_one_line_exit_2(r);
    CHECK(r.err.find("prime") != std::string::npos);
  }
  SECTION("global batch smaller than DP") {
    const CliResult r = plan("llama-2-7b", "--gpus 64 --global-batch 4 --seq 4096 --max-tp 2 --max-pp 2");
    require_one_line_exit_2(r);
    CHECK(r.err.find("--global-batch=4") != std::string::npos);
  }
  SECTION("a narrowing flag that cannot fit names the value that would") {
    const CliResult r = plan("llama-2-13b", "--gpus 8 --global-batch 64 --seq 4096 --tp 1 --pp 1 "
                                            "--zero 3 --micro-batch 4 --recompute none --attention materialized");
    require_one_line_exit_2(r);
    CHECK(r.err.find("it fits with --recompute") != std::string::npos);
  }
  SECTION("bad flag values") {
    require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --zero 4"));
    require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --tp 2,x"));
    require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --schedule 2f2b"));
    require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --objective speed"));
    require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --export jax"));
  }
}

TEST_CASE("cli plan: table with breakdowns plus --explain and --pareto") {
  const CliResult r = plan("llama-2-7b", "--gpus 8 --global-batch 64 --seq 4096 --explain --pareto");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (const char* s : {"meshplan plan: llama-2-7b", "bottleneck", "pp_bubble", "explain:",
                        "tp-divides-heads", "memory", "winner vs runner-up", "Pareto front"})
    CHECK(r.out.find(s) != std::string::npos);
}

TEST_CASE("cli plan: a cp column appears when a listed plan splits its sequences, so the degrees multiply to the GPUs") {
  // Llama 3.1 405B on 16,384 H100: the best plans use CP 2 (tp 8 x pp 16 x dp 64 alone would be 8,192 GPUs).
  const CliResult cp = sh(std::string(MESHPLAN_BIN) + " plan --model " + kModels +
                          "llama-3.1-405b.yaml --hardware h100-80gb-sxm --gpus 16384 --global-batch 2048 --seq 8192 "
                          "--top 3");
  INFO(cp.err);
  REQUIRE(cp.exit_code == 0);
  CHECK(cp.out.find("#  tp  pp  dp  cp  zero") != std::string::npos);
  CHECK(cp.out.find("1   8  16  64   2") != std::string::npos);
  // Without CP in the top rows the column stays out.
  const CliResult none = plan("llama-2-7b", "--gpus 8 --global-batch 64 --seq 4096 --top 3");
  REQUIRE(none.exit_code == 0);
  CHECK(none.out.find("#  tp  pp  dp  zero") != std::string::npos);
}

TEST_CASE("cli plan: JSON is the plan file that parses and is byte-identical run to run") {
  const std::string py = python();
  const std::string file = planner_test::tmp_path("plan.json");
  const std::string args = "--gpus 16 --global-batch 128 --seq 4096 --top 3 --format json --pareto";
  const CliResult a = plan("llama-2-13b", args + " --output " + file);
  const CliResult b = plan("llama-2-13b", args);
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(slurp(file) == a.out);
  const CliResult check = sh(py + " -c 'import json,sys; p=json.load(open(sys.argv[1])); "
                                  "assert p[\"schema\"]==\"meshplan.plan/1\"; "
                                  "assert len(p[\"candidates\"])==3; "
                                  "assert p[\"searched\"]==p[\"search\"][\"space\"]; "
                                  "assert p[\"searched\"]==sum(p[\"rejected\"].values())+p[\"search\"][\"fitting\"]; "
                                  "c=p[\"candidates\"]; assert c[0][\"time\"][\"step_s\"]<=c[1][\"time\"][\"step_s\"]; "
                                  "assert all(x[\"fits\"] for x in c); assert len(p[\"pareto\"])>=1; "
                                  "print(\"ok\")' " + file);
  INFO(check.err);
  CHECK(check.out == "ok\n");
  // The plan file feeds the other commands.
  const CliResult est = sh(std::string(MESHPLAN_BIN) + " estimate --plan " + file + " --candidate 2");
  INFO(est.err);
  CHECK(est.exit_code == 0);
  std::remove(file.c_str());
}

TEST_CASE("cli plan: YAML output") {
  const CliResult r = plan("llama-2-7b", "--gpus 8 --global-batch 64 --seq 4096 --top 2 --format yaml");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("schema: meshplan.plan/1") != std::string::npos);
  CHECK(r.out.find("candidates:") != std::string::npos);
}

TEST_CASE("cli plan: --export deepspeed parses and its batch arithmetic holds") {
  const std::string py = python();
  const CliResult r = plan("llama-2-70b", "--gpus 128 --global-batch 1024 --seq 4096 --export deepspeed");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const std::string file = planner_test::tmp_path("ds_config.json");
  std::ofstream(file) << r.out;
  const CliResult check = sh(py + " -c 'import json,sys; c=json.load(open(sys.argv[1])); "
                                  "b=c[\"train_batch_size\"]; "
                                  "m=c[\"train_micro_batch_size_per_gpu\"]*c[\"gradient_accumulation_steps\"]; "
                                  "print(b, b % m, 128 % (b // m))' " + file);
  std::remove(file.c_str());
  INFO(check.err);
  REQUIRE(check.exit_code == 0);
  CHECK(check.out == "1024 0 0\n");  // dp = 1024 / (micro x accumulation) divides the 128 GPUs
}

TEST_CASE("cli plan: --export megatron is a sourceable bash array") {
  const CliResult r = plan("llama-2-70b", "--gpus 128 --global-batch 1024 --seq 4096 --export megatron");
  REQUIRE(r.exit_code == 0);
  const std::string file = planner_test::tmp_path("megatron.sh");
  std::ofstream(file) << r.out;
  const CliResult check = sh("bash -c 'source " + file + " && echo ${#MEGATRON_ARGS[@]}'");
  std::remove(file.c_str());
  CHECK(check.exit_code == 0);
  CHECK(std::stoi(check.out) > 10);
  CHECK(r.out.find("--global-batch-size 1024") != std::string::npos);
}

TEST_CASE("cli plan: --framework rules, table and refusals") {
  const CliResult t = plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework megatron --top 3");
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("framework megatron") != std::string::npos);
  CHECK(t.out.find("18 B/param") != std::string::npos);
  CHECK(t.out.find("zb-h1") == std::string::npos);
  // A flag asking only for what the framework never runs: one line, exit 2.
  require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework megatron --schedule zb-h1"));
  require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework nemo --zero 3"));
  require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework fsdp --tp 2"));
  require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework jax"));
  require_one_line_exit_2(plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework megatron --export deepspeed"));
  require_one_line_exit_2(
      plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework megatron --bytes-per-param default"));
  // JSON job carries the framework and its bytes per parameter.
  const CliResult j = plan("llama-2-7b", "--gpus 8 --global-batch 64 --framework megatron --format json --top 1");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"framework\": \"megatron\"") != std::string::npos);
  CHECK(j.out.find("\"gradients\": 4") != std::string::npos);
}

TEST_CASE("cli plan: every framework export runs end to end") {
  for (const char* kind : {"megatron", "deepspeed", "fsdp", "torchtitan", "nemo"}) {
    INFO(kind);
    const CliResult r = plan("llama-2-7b", std::string("--gpus 8 --global-batch 64 --export ") + kind);
    CHECK(r.exit_code == 0);
    CHECK_FALSE(r.out.empty());
  }
}

TEST_CASE("cli estimate/simulate: --framework refuses what it cannot run, carries its convention") {
  const std::string base = std::string(MESHPLAN_BIN) + " estimate --model " + kModels +
                           "llama-2-7b.yaml --hardware a100-80gb-sxm --gpus 8 --global-batch 64 --tp 2 --pp 2";
  require_one_line_exit_2(sh(base + " --framework megatron --schedule zb-h1"));
  require_one_line_exit_2(sh(base + " --framework deepspeed --zero 2"));
  const CliResult ok = sh(base + " --framework megatron --zero 1 --format json");
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.out.find("\"framework\": \"megatron\"") != std::string::npos);
  CHECK(ok.out.find("\"total\": 18") != std::string::npos);
  const std::string sim = std::string(MESHPLAN_BIN) + " simulate --model " + kModels +
                          "llama-2-7b.yaml --hardware a100-80gb-sxm --gpus 8 --global-batch 64 --tp 2 --pp 2";
  require_one_line_exit_2(sh(sim + " --framework torchtitan --zero 1"));
}

// ep=etp=1 on a dense model leaves the JSON without expert keys (dense outputs byte-identical to
// before issue 11).
TEST_CASE("cli: --ep/--etp need a mixture-of-experts model") {
  require_dense_refusal(dense_7b("plan --ep 2"), "--ep");
  require_dense_refusal(dense_7b("plan --etp 2"), "--etp");
  require_dense_refusal(dense_7b("estimate --ep 2"), "--ep");
  require_dense_refusal(dense_7b("estimate --etp 2 --tp 2 --sequence-parallel"), "--etp");
  const CliResult ok = dense_7b("estimate --ep 1 --etp 1 --format json");
  REQUIRE(ok.exit_code == 0);
  CHECK(ok.out.find("\"ep\"") == std::string::npos);
  CHECK(ok.out.find("\"etp\"") == std::string::npos);
}
