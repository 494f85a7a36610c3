// The sustained-clock soak (executor/calibrate/soak_probe.h) on a device whose clock is scripted:
// windows, the settled rate of the last three, the slowest rank, and the cap at 1.
#include <catch2/catch.hpp>

#include <cmath>
#include <mutex>

#include "executor/calibrate/soak_probe.h"
#include "executor/comm_local.h"

using namespace meshplan::exec;
using Catch::Detail::Approx;

namespace {
// A GEMM of 1 ms per call while cold; after `settle_s` seconds of work it takes `hot_ms`.
struct ScriptedDevice {
  double settle_s, hot_ms, busy_s = 0;
  double run(int n) {
    double t = 0;
    for (int i = 0; i < n; ++i) {
      const double per_call = (busy_s < settle_s ? 1.0 : hot_ms) * 1e-3;
      t += per_call;
      busy_s += per_call;
    }
    return t;
  }
};
}  // namespace

TEST_CASE("soak windows: about 10 windows over the soak, sized from the last window's rate") {
  ScriptedDevice d{0.5, 1.25};
  const std::vector<double> w = soak_windows([&](int n) { return d.run(n); }, 1e-3, 2.0);
  REQUIRE(w.size() >= 9);
  CHECK(w.size() <= 12);
  CHECK(w.front() == Approx(1e-3));
  CHECK(w.back() == Approx(1.25e-3));
  CHECK(d.busy_s >= 2.0);
  CHECK(d.busy_s < 2.0 + 0.25);  // stops at the first window past the soak
}

TEST_CASE("soak: fraction = burst / settled rate of the slowest rank, 1 when the clock holds") {
  auto self = make_self_communicator();
  ScriptedDevice hot{0.3, 1.25};
  const SoakMeasurement m = run_soak_probe(*self, [&](int n) { return hot.run(n); }, 1e-3, 1.0);
  CHECK(m.soak_s == 1.0);
  CHECK(m.sustained_s_per_call == Approx(1.25e-3));
  CHECK(m.fraction == Approx(0.8));
  // A device that gets no slower (or faster) than its burst: capped at 1.
  ScriptedDevice steady{10.0, 1.0};
  CHECK(run_soak_probe(*self, [&](int n) { return steady.run(n) * 0.9; }, 1e-3, 0.5).fraction == 1.0);
  // Not run: soak 0 -> "not measured", fraction 1.
  const SoakMeasurement none = run_soak_probe(*self, [&](int n) { return steady.run(n); }, 1e-3, 0.0);
  CHECK(none.soak_s == 0.0);
  CHECK(none.fraction == 1.0);
  CHECK(none.window_s_per_call.empty());
  // Two ranks: the slower one sets the node's figure (a synchronous step waits for it).
  std::mutex mu;
  std::vector<double> fractions;
  run_local_ranks(2, [&](int rank, Communicator& c) {
    ScriptedDevice d{0.2, rank == 0 ? 1.1 : 1.6};
    const SoakMeasurement r = run_soak_probe(c, [&](int n) { return d.run(n); }, 1e-3, 0.6);
    std::lock_guard<std::mutex> lock(mu);
    fractions.push_back(r.fraction);
  });
  REQUIRE(fractions.size() == 2);
  CHECK(fractions[0] == Approx(1.0 / 1.6).epsilon(1e-5));
  CHECK(fractions[1] == Approx(1.0 / 1.6).epsilon(1e-5));
}
