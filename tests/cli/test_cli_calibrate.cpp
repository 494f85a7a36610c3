// `meshplan calibrate` input errors: one stderr line, exit 2 (CUDA without a device or CUDA build,
// unknown backend), and that the CUDA path with a GPU writes a profile plan accepts.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

static void check_one_line_exit2(const CliResult& r, std::initializer_list<std::string> needles) {
  INFO("stderr: " << r.err << "\nstdout: " << r.out);
  CHECK(r.exit_code == 2);
  CHECK(r.err_lines() == 1);
  CHECK(r.err.rfind("meshplan: ", 0) == 0);
  CHECK(r.err.find("(hint: ") != std::string::npos);
  CHECK(r.out.empty());
  for (const auto& n : needles) CHECK(r.err.find(n) != std::string::npos);
}

TEST_CASE("calibrate cli: --backend cuda on one rank without --base is one line, exit 2") {
  const std::string out = scratch_dir() + "/cuda-nobase.yaml";
  CliResult r = run_cli("calibrate --backend cuda --output " + out);
  check_one_line_exit2(r, {"ranks", "--base"});
}

// Without a CUDA build or device: the one-line error. With one: a profile that estimate accepts.
TEST_CASE("calibrate cli: --backend cuda --base on one rank (no GPU: one line, exit 2)") {
  const std::string out = scratch_dir() + "/cuda-gpu.yaml";
  CliResult r = run_cli("calibrate --backend cuda --base h100-80gb-sxm --quick --output " + out);
  if (r.exit_code == 0) {
    // A CUDA build on a machine with a GPU: the profile must load in plan/estimate.
    CHECK(r.out.find(out) != std::string::npos);
    CliResult e = run_cli("estimate --model " + source_path("examples/models/llama-2-7b.yaml") + " --hardware " +
                          out + " --gpus 8 --global-batch 64 --tp 8");
    INFO("estimate stderr: " << e.err);
    CHECK(e.exit_code == 0);
    return;
  }
  check_one_line_exit2(r, {"--backend", "cuda", "CUDA"});
}

TEST_CASE("calibrate cli: bad --base profile and unknown backend are one line, exit 2") {
  const std::string out = scratch_dir() + "/cuda-badbase.yaml";
  check_one_line_exit2(run_cli("calibrate --backend cuda --base /nonexistent/hw.yaml --output " + out),
                       {"/nonexistent/hw.yaml"});
  check_one_line_exit2(run_cli("calibrate --backend tpu --output " + out), {"--backend", "tpu"});
  check_one_line_exit2(run_cli("calibrate --backend cuda"), {"--output"});
}
