// `--export slurm|torchrun|mpirun|srun` on plan and estimate, and the host map of `meshplan run`
// on one host (the two-host runs are tests/multinode/).
#include <catch2/catch.hpp>

#include <unistd.h>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

namespace {

const std::string kTiny = source_path("examples/models/llama-tiny.yaml");

std::string estimate_args(const std::string& rest) {
  return "estimate --model " + kTiny + " --hardware a100-80gb-sxm --gpus 16 --global-batch 32 --seq 64 --tp 2 " + rest;
}

std::string host_name() {
  char buf[256] = {0};
  gethostname(buf, sizeof(buf) - 1);
  return buf;
}

}  // namespace

TEST_CASE("estimate --export: each launch script for the plan's 2 nodes, bash -n clean") {
  for (const char* kind : {"slurm", "torchrun", "mpirun", "srun"}) {
    INFO(kind);
    CliResult r = run_cli(estimate_args(std::string("--export ") + kind));
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out.rfind("#!/usr/bin/env bash\n", 0) == 0);
    const std::string path = write_scratch(std::string("launch-") + kind + ".sh", r.out);
    CHECK(std::system(("bash -n " + path).c_str()) == 0);
  }
  CHECK(run_cli(estimate_args("--export slurm")).out.find("#SBATCH --nodes=2\n") != std::string::npos);
  CHECK(run_cli(estimate_args("--export slurm")).out.find("--tensor-model-parallel-size 2") != std::string::npos);
  CHECK(run_cli(estimate_args("--export torchrun")).out.find("--nnodes=2 --nproc-per-node=8") != std::string::npos);
  CHECK(run_cli(estimate_args("--export mpirun")).out.find("mpirun -np 16 ") != std::string::npos);
  CHECK(run_cli(estimate_args("--export srun")).out.find("#SBATCH --ntasks-per-node=8\n") != std::string::npos);
}

TEST_CASE("plan --export mpirun: the launch script of the best plan") {
  CliResult r = run_cli("plan --model " + kTiny + " --hardware a100-80gb-sxm --gpus 16 --global-batch 32 --seq 64 "
                        "--no-progress --export mpirun");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("--map-by \"ppr:$RANKS_PER_HOST:node\"") != std::string::npos);
  CHECK(r.out.find("--comm-timeout-s") != std::string::npos);
}

TEST_CASE("plan --export slurm|torchrun: plans under Megatron-LM's rules, refuses another framework") {
  const std::string base = "plan --model " + source_path("examples/models/llama-2-70b.yaml") +
                           " --hardware a100-80gb-sxm --gpus 128 --global-batch 1024 --seq 4096 --no-progress ";
  for (const char* kind : {"slurm", "torchrun"}) {
    INFO(kind);
    CliResult r = run_cli(base + "--export " + kind);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("pretrain_gpt.py") != std::string::npos);
    CHECK(r.out.find("zb-h1") == std::string::npos);  // Megatron has no ZB-H1 in the args we export
    CHECK(r.out.find("--main-grads-dtype fp32") != std::string::npos);
    check_bad(base + "--framework fsdp --export " + kind, {"not --framework fsdp"});
  }
}

TEST_CASE("estimate --export slurm|torchrun refuses what Megatron-LM does not run, as --export megatron") {
  // ZeRO-3 under a pipeline (Megatron-FSDP is costed at pp 1 only); PyTorch's CP exchange as a
  // --cp-comm-type Megatron does not know.
  const std::string cp = "estimate --model " + source_path("examples/models/llama-3-8b.yaml") +
                         " --hardware h100-80gb-sxm --gpus 8 --global-batch 8 --seq 32768 --cp 8 --zero 0 "
                         "--framework torchtitan --cp-comm torch_all_gather --export ";
  for (const char* kind : {"slurm", "torchrun"}) {
    INFO(kind);
    check_bad(estimate_args("--zero 3 --pp 2 --export ") + kind, {"--export megatron", "zero"});
    check_bad(cp + kind, {"--export megatron", "torch_all_gather"});
  }
}

TEST_CASE("launch export: an unknown --export kind is one line naming the launch kinds") {
  for (const std::string& cmd : {estimate_args("--export pbs"),
                                "plan --model " + kTiny + " --hardware a100-80gb-sxm --gpus 16 --global-batch 32 "
                                "--no-progress --export pbs"})
    check_bad(cmd, {"--export=pbs", "slurm, torchrun, mpirun, srun"});
}

TEST_CASE("run on one rank: the host map names this host, in the table and the JSON") {
  const std::string plan = scratch_dir() + "/one.json";
  REQUIRE(run_cli("estimate --model " + kTiny + " --hardware a100-80gb-sxm --gpus 1 --global-batch 2 --seq 16 "
                  "--output " + plan).exit_code == 0);
  CliResult t = run_cli("run --plan " + plan + " --steps 1");
  INFO(t.err);
  REQUIRE(t.exit_code == 0);
  CHECK(t.out.find("ranks on 1 host (rank order tp-dp-pp):") != std::string::npos);
  CHECK(t.out.find(host_name()) != std::string::npos);
  CliResult j = run_cli("run --plan " + plan + " --steps 1 --format json");
  REQUIRE(j.exit_code == 0);
  CHECK(j.out.find("\"ranks\": [") != std::string::npos);
  CHECK(j.out.find("\"host\": \"" + host_name() + "\"") != std::string::npos);
  CHECK(j.err.find("ranks on 1 host") != std::string::npos);  // machine-readable stdout stays JSON
  // --allow-tp-across-nodes may accompany --plan on run (it is a placement permission there).
  CHECK(run_cli("run --plan " + plan + " --steps 1 --allow-tp-across-nodes").exit_code == 0);
}
