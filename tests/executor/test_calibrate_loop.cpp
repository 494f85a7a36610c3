// Acceptance 6: calibrate -> plan on the calibrated profile -> run -> predicted vs measured, on 2
// ranks, through the meshplan binary exactly as the README shows it.
#include <catch2/catch.hpp>

#include "core/io.h"
#include "run_helpers.h"

using namespace meshplan_test;

TEST_CASE("calibrate: calibrate, plan, run on 2 ranks prints the error table") {
  const std::string dir = temp_dir("loop");
  const std::string profile = dir + "/cpu.yaml";
  std::string out;
  int rc = run_command(mpirun_prefix(2) + MESHPLAN_BIN + " calibrate --quick --soak-s 0.3 --output " + profile, &out);
  INFO(out);
  REQUIRE(rc == 0);
  CHECK(out.find("busbw") != std::string::npos);
  CHECK(out.find("sustained clock: the largest GEMM run back to back for 0.3 s on every rank") != std::string::npos);

  // The profile reads back through core/io with its provenance.
  auto hw = meshplan::load_hardware(profile, "");
  INFO((hw.ok() ? std::string() : hw.error().one_line()));
  REQUIRE(hw.ok());
  CHECK(hw->provenance.kind == "calibrated");
  CHECK_FALSE(hw->provenance.tool_version.empty());
  CHECK(hw->peak_flops_for("fp32") > 0);
  CHECK((hw->sustained_clock_fraction > 0 && hw->sustained_clock_fraction <= 1));  // the soak's, written

  const std::string plan = dir + "/plan.json";
  rc = run_command(std::string(MESHPLAN_BIN) + " plan --model " + write_test_model(dir) + " --hardware " +
                       profile + " --gpus 2 --global-batch 8 --seq 16 --dtype fp32 --top 3 --output " + plan,
                   &out);
  INFO(out);
  REQUIRE(rc == 0);

  rc = run_meshplan(2, "--plan " + plan + " --steps 4", &out);
  INFO(out);
  REQUIRE(rc == 0);
  for (const char* row : {"step time (s)", "peak memory", "communication", "predicted", "measured", "error"})
    CHECK(out.find(row) != std::string::npos);
  CHECK(out.find("(calibrated)") != std::string::npos);

  rc = run_meshplan(2, "--plan " + plan + " --steps 3 --format json", &out);
  REQUIRE(rc == 0);
  CHECK(json_numbers(out, "step_s").size() >= 3);  // measured, predicted, error
  CHECK(json_numbers(out, "peak_bytes").size() >= 3);
  std::filesystem::remove_all(dir);
}
