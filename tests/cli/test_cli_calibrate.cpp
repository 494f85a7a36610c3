// `meshplan calibrate` input errors: one stderr line, exit 2 (CUDA without a device or CUDA build,
// unknown backend), and that the CUDA path with a GPU writes a profile plan accepts.
#include <catch2/catch.hpp>

#include <string>

#include "cli_run.h"

using namespace meshplan_test;

TEST_CASE("calibrate cli: --backend cuda on one rank without --base is one line, exit 2") {
  const std::string out = scratch_dir() + "/cuda-nobase.yaml";
  CliResult r = run_cli("calibrate --backend cuda --output " + out);
  check_refusal(r, {"ranks", "--base"});
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
  check_refusal(r, {"--backend", "cuda", "CUDA"});
}

TEST_CASE("calibrate cli: bad --base profile and unknown backend are one line, exit 2") {
  const std::string out = scratch_dir() + "/cuda-badbase.yaml";
  check_refusal(run_cli("calibrate --backend cuda --base /nonexistent/hw.yaml --output " + out),
                       {"/nonexistent/hw.yaml"});
  check_refusal(run_cli("calibrate --backend tpu --output " + out), {"--backend", "tpu"});
  check_refusal(run_cli("calibrate --backend cuda"), {"--output"});
}
