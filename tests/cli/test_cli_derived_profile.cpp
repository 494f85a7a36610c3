// CLI tests of derived hardware profiles (`base:`): a user's profile that changes one key of a shipped one,
// the plan file it writes, and the one-line refusal of a missing base.
#include <string>

#include "cli/cli_run.h"

using namespace meshplan_test;

namespace {

const std::string kArgs =
    " --model " + source_path("examples/models/llama-3-70b.yaml") +
    " --gpus 64 --global-batch 256 --seq 8192 --tp 8 --pp 2 --zero 1 --recompute selective --sequence-parallel"
    " --format json";

}  // namespace

TEST_CASE("a derived profile with a slower network costs only its network differently") {
  const std::string slow = write_scratch("derived-slow-net.yaml",
                                         "name: derived-slow-net\n"
                                         "provenance: {kind: datasheet, date: \"2026-12-03\"}\n"
                                         "base: h100-80gb-sxm\n"
                                         "network:\n"
                                         "  inter_node: {bandwidth_gb_per_s: 12.5}\n");
  const CliResult shipped = run_cli("estimate --hardware h100-80gb-sxm" + kArgs);
  const CliResult derived = run_cli("estimate --hardware " + slow + kArgs);
  INFO(shipped.err << derived.err);
  REQUIRE(shipped.exit_code == 0);
  REQUIRE(derived.exit_code == 0);
  // The GPU is the base's: the same memory, and compute within the slowdown that collectives hidden under it
  // cost (more of them with the slower network); the network is the file's: more exposed DP time.
  CHECK(json_number(derived.out, "peak_bytes") == json_number(shipped.out, "peak_bytes"));
  CHECK(json_number(derived.out, "compute_s") == Approx(json_number(shipped.out, "compute_s")).epsilon(0.01));
  CHECK(json_number(derived.out, "dp_comm_s") > 2.0 * json_number(shipped.out, "dp_comm_s"));
  CHECK(json_number(derived.out, "step_s") > json_number(shipped.out, "step_s"));
}

TEST_CASE("a plan written on a derived profile carries the resolved profile and reads back alike") {
  const std::string slow = write_scratch("derived-plan-net.yaml",
                                         "base: h100-80gb-sxm\n"
                                         "network:\n"
                                         "  inter_node: {bandwidth_gb_per_s: 12.5}\n");
  const std::string plan = scratch_dir() + "/derived-plan.json";
  const CliResult first = run_cli("estimate --hardware " + slow + kArgs + " --output " + plan);
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const std::string text = slurp(plan);
  CHECK(text.find("\"base\"") == std::string::npos);
  CHECK(text.find("\"bandwidth_gb_per_s\": 12.5") != std::string::npos);
  CHECK(text.find("\"name\": \"derived-plan-net\"") != std::string::npos);
  // The plan stands alone: the profile file may change or go; the plan estimates the same.
  write_scratch("derived-plan-net.yaml", "base: no-such-profile\n");
  const CliResult again = run_cli("estimate --plan " + plan + " --format json");
  INFO(again.err);
  REQUIRE(again.exit_code == 0);
  CHECK(json_number(again.out, "step_s") == json_number(first.out, "step_s"));
}

TEST_CASE("a derived profile whose base does not exist is a one-line refusal naming it") {
  const std::string bad = write_scratch("derived-bad.yaml", "base: h100-80gb-sxn\n");
  check_refusal(run_cli("estimate --hardware " + bad + kArgs), {"derived-bad.yaml", "base", "h100-80gb-sxn"});
}
