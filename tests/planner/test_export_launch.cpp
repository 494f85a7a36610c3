// Launch-script exports (Slurm, torchrun, mpirun, srun): golden text, `bash -n`, and what the
// scripts actually pass to srun/torchrun (run against stand-in commands that print their argv).
// Set MESHPLAN_UPDATE_GOLDEN=1 to rewrite the golden files after an intended change.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "planner/export.h"
#include "planner/export_launch.h"
#include "planner_test_util.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::check_golden;
using planner_test::config;
using planner_test::llama70b;
using planner_test::problem;

namespace {

// A scratch directory for one test case.
std::string scratch(const std::string& name) {
  const std::string dir = "/tmp/meshplan_test_launch_" + std::to_string(getpid()) + "_" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Runs `cmd` (stdout+stderr); `rc` gets the exit status.
std::string run(const std::string& cmd, int& rc) { return planner_test::run(cmd + " 2>&1", rc); }

// 70B on 128 A100s (16 nodes x 8): tp 8, pp 4, dp 4, ZeRO-1, selective recompute.
ParallelConfig llama70b_config() { return config(8, 4, 4, 1, 1, 256, Recompute::Selective, true); }

// A framework target independent of the Megatron export's text (that has its own goldens).
LaunchTarget test_target() {
  return LaunchTarget{"testfw", "train.py", "TEST_ARGS=(\n  --tp 8\n  --pp 4\n)\n", "TEST_ARGS"};
}

// Stand-ins that print their arguments: scontrol lists two hosts, srun drops its own options and
// runs the rest (as on one node), torchrun prints its argv one per line.
std::string fake_bin(const std::string& dir) {
  const std::string bin = dir + "/bin";
  std::filesystem::create_directories(bin);
  // More host names than a pipe holds: a script that reads only the first line (`| head -n 1`) gets
  // scontrol's SIGPIPE under pipefail every time, not by chance.
  write(bin + "/scontrol", "#!/bin/sh\necho node001\necho node002\ni=3\nwhile [ $i -le 20000 ]; do echo node$i; i=$((i+1)); done\n");
  write(bin + "/srun", "#!/bin/sh\necho \"srun $*\"\nwhile [ \"${1#--}\" != \"$1\" ]; do shift; done\nexec \"$@\"\n");
  write(bin + "/torchrun", "#!/bin/sh\nfor a in \"$@\"; do echo \"arg $a\"; done\n");
  write(bin + "/mpirun", "#!/bin/sh\nfor a in \"$@\"; do echo \"arg $a\"; done\n");
  for (const char* f : {"scontrol", "srun", "torchrun", "mpirun"})
    std::filesystem::permissions(bin + "/" + f, std::filesystem::perms::owner_all);
  return bin;
}

}  // namespace

TEST_CASE("launch shape: nodes and processes per node from the plan's GPUs") {
  LaunchShape s = launch_shape(llama70b());
  CHECK(s.nodes == 16);
  CHECK(s.procs_per_node == 8);
  s = launch_shape(problem("llama-2-70b", "a100-80gb-sxm", 4, 16, 4096));
  CHECK(s.nodes == 1);
  CHECK(s.procs_per_node == 4);
  s = launch_shape(problem("llama-2-70b", "a100-80gb-sxm", 12, 16, 4096));  // 1.5 nodes
  CHECK(s.nodes == 2);
  CHECK(s.procs_per_node == 8);
}

TEST_CASE("launch exports: golden text") {
  const Problem p = llama70b();
  const ParallelConfig c = llama70b_config();
  const LaunchShape s = launch_shape(p);
  check_golden("launch/slurm_llama-2-70b.sh", slurm_torchrun_script(p, c, test_target(), s));
  check_golden("launch/torchrun_llama-2-70b.sh", torchrun_script(p, c, test_target(), s));
  check_golden("launch/mpirun_llama-2-70b.sh", mpirun_meshplan_script(p, c, s));
  check_golden("launch/srun_llama-2-70b.sh", srun_meshplan_script(p, c, s));
}

TEST_CASE("launch exports: every script passes bash -n, with the Megatron target too") {
  const Problem p = llama70b();
  const ParallelConfig c = llama70b_config();
  const LaunchShape s = launch_shape(p);
  const std::string dir = scratch("syntax");
  const std::pair<const char*, std::string> scripts[] = {
      {"slurm", slurm_torchrun_script(p, c, test_target(), s)},
      {"slurm-megatron", slurm_torchrun_script(p, c, megatron_target(p, c), s)},
      {"torchrun", torchrun_script(p, c, test_target(), s)},
      {"torchrun-megatron", torchrun_script(p, c, megatron_target(p, c), s)},
      {"mpirun", mpirun_meshplan_script(p, c, s)},
      {"srun", srun_meshplan_script(p, c, s)}};
  for (const auto& [name, text] : scripts) {
    int rc = -1;
    const std::string out = run("bash -n " + write(dir + "/" + name + ".sh", text), rc);
    INFO(name << ": " << out);
    CHECK(rc == 0);
    CHECK(text.rfind("#!/usr/bin/env bash\n", 0) == 0);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("launch exports: the Megatron target carries the --export megatron arguments") {
  const Problem p = llama70b();
  const ParallelConfig c = llama70b_config();
  const LaunchTarget t = megatron_target(p, c);
  CHECK(t.entry_point == "pretrain_gpt.py");
  CHECK(t.args_snippet == megatron_args(p, c));
  const std::string script = slurm_torchrun_script(p, c, t, launch_shape(p));
  CHECK(script.find(megatron_args(p, c)) != std::string::npos);
  CHECK(script.find("\"${MEGATRON_ARGS[@]}\"") != std::string::npos);
}

TEST_CASE("slurm export: srun bounds the job and torchrun meets at the first host") {
  const Problem p = llama70b();
  const ParallelConfig c = llama70b_config();
  const std::string dir = scratch("slurm");
  const std::string bin = fake_bin(dir);
  const std::string script = write(dir + "/job.sh", slurm_torchrun_script(p, c, test_target(), launch_shape(p)));
  int rc = -1;
  const std::string out = run("cd " + dir + " && SLURM_JOB_NODELIST='node[001-002]' SLURM_JOB_ID=42 PATH=" + bin +
                                  ":$PATH bash " + script + " --extra 1", rc);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("srun --nodes=16 --ntasks-per-node=1 --kill-on-bad-exit=1 --wait=60 timeout") != std::string::npos);
  for (const char* arg : {"arg --nnodes=16", "arg --nproc-per-node=8", "arg --max-restarts=0", "arg --rdzv-id=42",
                          "arg --rdzv-backend=c10d", "arg --rdzv-endpoint=node001:29500", "arg train.py",
                          "arg --tp\narg 8\narg --pp\narg 4\narg --extra\narg 1\n"})
    CHECK(out.find(arg) != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("torchrun export: requires MASTER_ADDR and runs torchrun under timeout") {
  const Problem p = llama70b();
  const ParallelConfig c = llama70b_config();
  const std::string dir = scratch("torchrun");
  const std::string bin = fake_bin(dir);
  const std::string script = write(dir + "/node.sh", torchrun_script(p, c, test_target(), launch_shape(p)));
  int rc = -1;
  std::string out = run("cd " + dir + " && env -u MASTER_ADDR PATH=" + bin + ":$PATH bash " + script, rc);
  CHECK(rc != 0);
  CHECK(out.find("set MASTER_ADDR") != std::string::npos);
  out = run("cd " + dir + " && MASTER_ADDR=10.0.0.7 MASTER_PORT=6000 PATH=" + bin + ":$PATH bash " + script, rc);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("arg --rdzv-endpoint=10.0.0.7:6000") != std::string::npos);
  CHECK(out.find("arg --nnodes=16") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("mpirun export: ranks per host, TCP interface, timeouts and the plan reach mpirun") {
  const Problem p = llama70b();
  const ParallelConfig c = llama70b_config();
  const std::string dir = scratch("mpirun");
  const std::string bin = fake_bin(dir);
  const std::string script = write(dir + "/run.sh", mpirun_meshplan_script(p, c, launch_shape(p)));
  int rc = -1;
  const std::string out = run("cd " + dir + " && NET_IF=eth1 JOB_TIMEOUT_S=600 COMM_TIMEOUT_S=30 PLAN=p.json "
                              "MPIRUN_ARGS='--allow-run-as-root --oversubscribe' PATH=" + bin + ":$PATH bash " +
                              script + " --steps 3", rc);
  INFO(out);
  REQUIRE(rc == 0);
  for (const char* seq : {"arg -np\narg 128\n", "arg --map-by\narg ppr:8:node\n", "arg --hostfile\narg hostfile\n",
                          "arg btl_tcp_if_include\narg eth1\n", "arg oob_tcp_if_include\narg eth1\n",
                          "arg --timeout\narg 600\n", "arg --allow-run-as-root\narg --oversubscribe\n",
                          "arg meshplan\narg run\narg --plan\narg p.json\narg --comm-timeout-s\narg 30\narg --steps\narg 3\n"})
    CHECK(out.find(seq) != std::string::npos);
  // Without NET_IF, no interface restriction is passed.
  const std::string plain = run("cd " + dir + " && PATH=" + bin + ":$PATH bash " + script, rc);
  REQUIRE(rc == 0);
  CHECK(plain.find("if_include") == std::string::npos);
  std::filesystem::remove_all(dir);
}
