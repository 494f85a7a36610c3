// CLI of activation offloading (--activation-offload-layers): JSON, plan file, exports, planner space,
// one-line refusals where Megatron-Core refuses it.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
const std::string kLlama70b = source_path("examples/models/llama-3-70b.yaml");  // 80 layers
const std::string kBase = "estimate --model " + kLlama70b +
                          " --hardware gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 --framework megatron "
                          "--zero 1 --micro-batch 1 ";
}  // namespace

TEST_CASE("estimate --activation-offload-layers keeps L - n + 1 layers' activations, round-trips, exports") {
  const std::string plan = scratch_dir() + "/offload-plan.json";
  CliResult off = run_cli(kBase + "--format json");
  CliResult on = run_cli(kBase + "--activation-offload-layers 40 --format json --output " + plan);
  INFO(on.err);
  REQUIRE(off.exit_code == 0);
  REQUIRE(on.exit_code == 0);
  CHECK(json_number(on.out, "activations_bytes") < json_number(off.out, "activations_bytes"));
  CHECK(json_number(on.out, "step_s") == Approx(json_number(off.out, "step_s")));  // NVLink-C2C hides the copies
  CHECK(on.out.find("\"activation_offload_layers\": 40") != std::string::npos);
  CHECK(off.out.find("activation_offload_layers") == std::string::npos);
  CliResult again = run_cli("estimate --plan " + plan + " --format json");
  REQUIRE(again.exit_code == 0);
  CHECK(json_number(again.out, "activations_bytes") == Approx(json_number(on.out, "activations_bytes")));
  CHECK(run_cli("estimate --plan " + plan).out.find("activations of 40 layers offloaded to host") != std::string::npos);
  CliResult ex = run_cli(kBase + "--activation-offload-layers 40 --export slurm");
  REQUIRE(ex.exit_code == 0);
  CHECK(ex.out.find("--cpu-offloading-num-layers 40") != std::string::npos);
}

TEST_CASE("estimate activation offloading is refused in one line where Megatron-Core refuses it") {
  check_bad(kBase + "--activation-offload-layers 80", {"--activation-offload-layers", "less than"});
  check_bad(kBase + "--activation-offload-layers 40 --recompute selective",
            {"--activation-offload-layers", "recomputation"});
  check_bad("estimate --model " + kLlama70b + " --hardware gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
            "--framework megatron --zero 1 --pp 2 --activation-offload-layers 40",
            {"--activation-offload-layers", "pipeline"});
  check_bad("estimate --model " + kLlama70b + " --hardware gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
            "--framework fsdp --zero 3 --activation-offload-layers 40",
            {"--activation-offload-layers", "fsdp"});
  check_bad("estimate --model " + kLlama70b + " --hardware a100-80gb-sxm --gpus 64 --global-batch 256 --seq 8192 "
            "--framework megatron --zero 1 --activation-offload-layers 40",
            {"--activation-offload-layers", "host_link"});
  check_bad(kBase + "--activation-offload-layers -1", {"--activation-offload-layers", "negative"});
}

TEST_CASE("plan --activation-offload-layers searches pp 1 without recomputation only") {
  const std::string plan = "plan --model " + kLlama70b +
                           " --hardware gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 --framework megatron "
                           "--activation-offload-layers 40 --format json";
  CliResult r = run_cli(plan);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("\"pp\": 1") != std::string::npos);
  CHECK(r.out.find("\"pp\": 2") == std::string::npos);
  CHECK(r.out.find("\"recompute\": \"full\"") == std::string::npos);
  CHECK(r.out.find("\"recompute\": \"selective\"") == std::string::npos);
  CliResult nemo = run_cli("plan --model " + kLlama70b + " --hardware gb200-nvl72 --gpus 64 --global-batch 256 "
                           "--seq 8192 --framework nemo --activation-offload-layers 40 --export nemo");
  REQUIRE(nemo.exit_code == 0);
  CHECK(nemo.out.find("  cpu_offloading: true\n  cpu_offloading_num_layers: 40\n") != std::string::npos);
  CHECK(nemo.out.find("cpu_offloading_weights: false") != std::string::npos);
  check_bad("plan --model " + kLlama70b + " --hardware gb200-nvl72 --gpus 64 --global-batch 256 --seq 8192 "
            "--framework megatron --activation-offload-layers 40 --recompute full",
            {"--activation-offload-layers", "recomputation"});
}
