// CLI of --cuda-graphs (core/cuda_graphs.h, costmodel/host_launch.h): help text, the host wait it takes
// off an eager MoE step, the plan-file round trip, Megatron's and NeMo's keys, and the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {
const std::string kQwen = source_path("examples/models/qwen3-30b-a3b.json");

std::string qwen(const std::string& rest) {
  return "estimate --model " + kQwen + " --hardware b200 --gpus 8 --global-batch 512 --seq 4096 --ep 8 --zero 1 "
         "--framework megatron " + rest;
}
size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }
}  // namespace

TEST_CASE("estimate, plan and simulate --help state --cuda-graphs") {
  for (const char* cmd : {"estimate", "plan", "simulate"}) {
    CliResult h = run_cli(std::string(cmd) + " --help");
    INFO(cmd);
    REQUIRE(h.exit_code == 0);
    CHECK(h.out.find("--cuda-graphs") != std::string::npos);
    CHECK(h.out.find("full_iteration") != std::string::npos);
  }
}

TEST_CASE("an eager micro-batch-1 MoE step waits on the host - CUDA graphs take the wait off and the plan keeps them") {
  CliResult eager = run_cli(qwen("--format json"));
  const std::string plan = scratch_dir() + "/cuda-graphs-plan.json";
  CliResult part = run_cli(qwen("--cuda-graphs attn,moe_router,moe_preprocess --format json --output " + plan));
  CliResult full = run_cli(qwen("--cuda-graphs full_iteration --format json"));
  for (const CliResult* r : {&eager, &part, &full}) {
    INFO(r->err);
    REQUIRE(r->exit_code == 0);
  }
  CHECK(json_number(eager.out, "host_wait_s") > 0.0);
  CHECK(json_number(part.out, "step_s") < json_number(eager.out, "step_s"));
  CHECK(json_number(full.out, "step_s") < json_number(part.out, "step_s"));
  CHECK(full.out.find("host_wait_s") == std::string::npos);  // nothing waits: no key
  CHECK(slurp(plan).find("\"cuda_graphs\": [\"attn\", \"moe_router\", \"moe_preprocess\"]") != std::string::npos);
  CliResult back = run_cli("estimate --plan " + plan + " --format json");
  INFO(back.err);
  REQUIRE(back.exit_code == 0);
  CHECK(json_number(back.out, "step_s") == json_number(part.out, "step_s"));
  CliResult table = run_cli("estimate --plan " + plan);
  CHECK(table.out.find("graphs=[attn,moe_router,moe_preprocess]") != std::string::npos);
  CliResult eager_table = run_cli(qwen(""));
  CHECK(eager_table.out.find("of which host wait") != std::string::npos);
  CHECK(eager_table.out.find("bottleneck: host") != std::string::npos);
}

TEST_CASE("Megatron and NeMo exports state the CUDA graph scopes and the others refuse them") {
  const std::string common = "plan --model " + kQwen + " --hardware b200 --gpus 8 --global-batch 256 --seq 4096 "
                             "--tp 1 --pp 1 --ep 8 --zero 1 ";
  CliResult part = run_cli(common + "--framework megatron --cuda-graphs attn,moe_router,moe_preprocess --export megatron");
  INFO(part.err);
  REQUIRE(part.exit_code == 0);
  CHECK(part.out.find("--cuda-graph-impl transformer_engine") != std::string::npos);
  CHECK(part.out.find("--cuda-graph-scope attn moe_router moe_preprocess") != std::string::npos);
  CHECK(part.out.find("--moe-pad-expert-input-to-capacity") == std::string::npos);  // dropless
  CliResult full = run_cli(common + "--framework megatron --cuda-graphs full_iteration --export megatron");
  INFO(full.err);
  REQUIRE(full.exit_code == 0);
  for (const char* flag : {"--cuda-graph-impl local", "--cuda-graph-scope full_iteration",
                           "--no-check-for-nan-in-loss-and-grad", "--moe-pad-experts-for-cuda-graph-inference",
                           "--moe-expert-capacity-factor 1.0", "--moe-pad-expert-input-to-capacity"}) {
    INFO(flag);
    CHECK(full.out.find(flag) != std::string::npos);
  }
  CliResult nemo = run_cli(common + "--framework nemo --cuda-graphs attn,moe --export nemo");
  INFO(nemo.err);
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("cuda_graph_impl: transformer_engine") != std::string::npos);
  CHECK(nemo.out.find("cuda_graph_scope: [attn, moe]") != std::string::npos);
  CHECK(nemo.out.find("moe_pad_expert_input_to_capacity: true") != std::string::npos);
  CliResult ds = run_cli(common + "--cuda-graphs attn --export deepspeed");
  CHECK(ds.exit_code == 2);
  CHECK(ds.err.find("framework deepspeed does not run them") != std::string::npos);
  CHECK(lines(ds.err) == 1);
}

TEST_CASE("cuda-graphs refusals are one line and exit 2") {
  const std::string llama = "estimate --model " + source_path("examples/models/llama-2-7b.yaml") +
                            " --hardware h100-80gb-sxm --gpus 8 --global-batch 64 --seq 4096 ";
  struct Case {
    std::string args, says;
  };
  for (const Case& c : {Case{"--framework megatron --cuda-graphs attn,layer", "layer"},
                        Case{"--framework megatron --cuda-graphs attn,attn", "attn"},
                        Case{"--cuda-graphs attn", "framework meshplan"},
                        Case{"--framework megatron --cuda-graphs moe_router", "is dense"},
                        Case{"--framework megatron --cuda-graphs attn,full_iteration", "alone"},
                        Case{"--framework megatron --cuda-graphs attn --recompute full", "full_iteration"}}) {
    CliResult r = run_cli(llama + c.args);
    INFO(c.args);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(lines(r.err) == 1);
  }
  CliResult moe = run_cli(qwen("--cuda-graphs moe_preprocess"));
  CHECK(moe.exit_code == 2);
  CHECK(moe.err.find("with moe_router") != std::string::npos);
  CliResult both = run_cli(qwen("--cuda-graphs moe,moe_router"));
  CHECK(both.exit_code == 2);
  CHECK(both.err.find("moe_router") != std::string::npos);
}

TEST_CASE("meshplan run refuses a plan with CUDA graphs in one line, exit 2") {
  const std::string plan = scratch_dir() + "/cuda-graphs-run.json";
  CliResult est = run_cli("estimate --model " + source_path("examples/models/llama-tiny.yaml") +
                          " --hardware a100-80gb-sxm --gpus 1 --global-batch 4 --seq 128 --framework megatron "
                          "--cuda-graphs attn --output " + plan);
  INFO(est.err);
  REQUIRE(est.exit_code == 0);
  CliResult run = run_cli("run --plan " + plan + " --steps 1");
  CHECK(run.exit_code == 2);
  CHECK(run.err.find("cuda_graphs=attn") != std::string::npos);
  CHECK(lines(run.err) == 1);
}
