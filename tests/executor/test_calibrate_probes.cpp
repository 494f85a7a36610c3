// Calibration probes under mpirun (2 ranks): every measurement verified and positive, fits
// finite, and the calibrated profile passes the same validation as shipped profiles.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/hardware_profile.h"
#include "dist_launch.h"
#include "executor/calibrate/calibration.h"
#include "executor/mpi/mpi_comm.h"

using namespace meshplan;
using namespace meshplan::exec;

TEST_CASE("calibrate: probes, fits and profile on 2 ranks") {
  if (!meshplan_test::inside_mpirun()) {
    std::string out;
    int rc = meshplan_test::launch_self(2, "calibrate: probes, fits and profile on 2 ranks", &out);
    INFO(out);
    REQUIRE(rc == 0);
    return;
  }
  MpiRuntime rt(120.0);
  auto backend = make_cpu_backend();
  CalibrationOptions o;
  o.gemm_max_n = 128;
  o.gemm_target_s = 0.005;
  o.memory_bytes = 4 << 20;
  o.sweep.max_bytes = 1 << 20;
  o.sweep.target_s = 0.002;
  CalibrationResult r = run_calibration(*backend, rt.world(), o);
  CHECK(r.ranks == 2);
  CHECK(r.ranks_per_node == 2);
  CHECK(r.all_verified);
  REQUIRE_FALSE(r.gemm.empty());
  for (const auto& g : r.gemm) {
    CHECK(g.verified);
    CHECK(g.time_s > 0);
  }
  CHECK(r.memory.verified);
  CHECK(r.memory.bytes_per_s > 1e8);  // any machine streams more than 100 MB/s
  // 8 B .. 512 KiB in steps of 4 (9 sizes), then the 1 MiB maximum: 10 sizes per collective, 4 collectives.
  CHECK(r.collectives.size() == 40);
  for (const auto& c : r.collectives) {
    CHECK(c.verified);
    CHECK(c.time_s > 0);
    CHECK(c.busbw_bytes_per_s == Approx(c.algbw_bytes_per_s * bus_bandwidth_factor(c.op, 2)));
  }
  CHECK(r.peak_flops > 1e8);
  CHECK(std::isfinite(r.link.link.latency_s));
  CHECK(r.link.link.bandwidth_bytes_per_s > 0);
  CHECK(r.per_collective.size() == 4);
  for (const auto& p : r.gemm_curve) CHECK((p.efficiency > 0 && p.efficiency <= 1.0));

  CHECK(r.soak.soak_s == 0.0);  // no soak asked for: not measured, the profile says 1
  HardwareProfile hw = calibrated_profile(r, "cpu-test", "2024-01-01", "test");
  CHECK(hw.sustained_clock_fraction == 1.0);
  CHECK(validate_hardware(hw).empty());
  CHECK(hw.provenance.kind == "calibrated");
  CHECK(hw.provenance.host == r.host);
  CHECK(hw.peak_flops_for("fp32") == r.peak_flops);
  CHECK(hw.gpus_per_node == 2);
}
