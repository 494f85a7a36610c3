// `meshplan selftest` and the device error paths of `run`: the CPU selftest prints its table and
// exits 0; --backend cuda without a device (or a CUDA build) is one line and exit 2, with one it
// must pass; a DeviceError during a run is one line and exit 1, never "terminate called" / rc 134.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

TEST_CASE("selftest cli: --backend cpu prints the table and passes") {
  CliResult r = run_cli("selftest --backend cpu");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.empty());
  for (const char* col : {"name", "shape", "max abs error", "max rel error", "tolerance", "ok"}) {
    CHECK(r.out.find(col) != std::string::npos);
  }
  for (const char* kernel : {"gemm NT", "attention backward dq", "rmsnorm backward dw", "cross-entropy backward", "adamw update"}) {
    CHECK(r.out.find(kernel) != std::string::npos);
  }
  CHECK(r.out.find("MISMATCH") == std::string::npos);
  CHECK(r.out.find("checks ok") != std::string::npos);
}

TEST_CASE("selftest cli: --backend cuda passes on a GPU, else says why in one line (exit 2)") {
  CliResult r = run_cli("selftest --backend cuda");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (r.exit_code == 0) {  // a machine with a GPU: every check held
    CHECK(r.out.find("nccl all-reduce") != std::string::npos);
    CHECK(r.out.find("MISMATCH") == std::string::npos);
    return;
  }
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("meshplan: ", 0) == 0);
  CHECK(r.err.find("CUDA") != std::string::npos);
  CHECK(r.out.empty());
}

TEST_CASE("selftest cli: unknown backend is one line, exit 2") {
  CliResult r = run_cli("selftest --backend tpu");
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
}

TEST_CASE("run cli: a device error ends the run with one line and exit 1") {
  CliResult r = run_cli("run --model " + source_path("examples/models/llama-tiny.yaml") +
                        " --hardware a100-80gb-sxm --gpus 1 --global-batch 2 --seq 16 --micro-batch 1 --steps 2 --format json"
                        " --test-device-error");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("meshplan: ", 0) == 0);
  CHECK(r.err.find("cudaMalloc") != std::string::npos);
  CHECK(r.err.find("terminate") == std::string::npos);
}

TEST_CASE("selftest cli: the header names the attention kernels checked") {
  CliResult r = run_cli("selftest --backend cpu");
  CHECK(r.out.find("attention reference") != std::string::npos);
}

TEST_CASE("run cli: --cuda-attention and --cuda-gemm take only their documented values") {
  const std::string base = "run --model " + source_path("examples/models/llama-tiny.yaml") +
                           " --hardware a100-80gb-sxm --gpus 1 --global-batch 2 --seq 16 --micro-batch 1 --steps 1";
  for (const char* bad : {" --cuda-attention flash", " --cuda-gemm fp16"}) {
    CliResult r = run_cli(base + bad);
    INFO(bad << " stderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err_lines() == 1);
  }
  CliResult help = run_cli("run --help");
  for (const char* flag : {"--cuda-attention", "cudnn|reference", "--cuda-gemm", "bf16-copy"}) {
    CHECK(help.out.find(flag) != std::string::npos);
  }
}
