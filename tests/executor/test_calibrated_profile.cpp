// calibrated_profile on hand-made measurements: whatever a sweep measured, the profile it writes
// reads back through core/io (a --quick sweep on a noisy 2-core VM once wrote a 1e21 GB/s link).
#include <catch2/catch.hpp>

#include "core/io.h"
#include "core/limits.h"
#include "executor/calibrate/calibration.h"

using namespace meshplan;
using namespace meshplan::exec;

namespace {

// A 2-rank CPU calibration whose collectives took 50 us whatever their size, the last one 40 us.
CalibrationResult latency_bound_result() {
  CalibrationResult r;
  r.ranks = 2;
  r.ranks_per_node = 2;
  r.host = "vm";
  r.cpu_name = "test CPU";
  r.host_memory_bytes = 24e9;
  r.peak_flops = 35.8e9;
  r.gemm_curve = {{1e6, 0.2}, {3.4e7, 1.0}};
  r.memory.bytes_per_s = 10e9;
  r.elementwise.bytes_per_s = 6e9;
  std::vector<CollectiveSample> s;
  for (double b = 8; b <= 4e6; b *= 8) s.push_back({Collective::AllReduceRing, 2, b, 50e-6});
  s.back().time_s = 40e-6;
  r.link = fit_link(s);
  return r;
}

}  // namespace

TEST_CASE("calibrated profile of a latency-bound sweep reads back with the format's largest bandwidth") {
  const CalibrationResult r = latency_bound_result();
  REQUIRE_FALSE(r.link.bandwidth_resolved);
  const HardwareProfile hw = calibrated_profile(r, "cpu-vm", "2026-12-02", "test");
  auto back = parse_hardware(hardware_to_yaml(hw), "cpu-vm.yaml");
  INFO((back.ok() ? std::string() : back.error().one_line()));
  REQUIRE(back.ok());
  CHECK(back->intra_node.bandwidth_bytes_per_s == Approx(limits::kMaxLinkGbPerS * 1e9));
  CHECK(back->inter_node.latency_s == Approx(r.link.link.latency_s));
  CHECK(back->peak_flops_for("fp32") == Approx(35.8e9));
}
