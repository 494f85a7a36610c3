// Tests of the calibration fits: alpha-beta recovery from synthetic sweeps, GEMM efficiency curves.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/limits.h"
#include "costmodel/fit.h"

using namespace meshplan;

static std::vector<CollectiveSample> sweep(const LinkSpec& link, double noise_amplitude) {
  std::vector<CollectiveSample> out;
  int i = 0;
  for (Collective op : {Collective::AllReduceRing, Collective::AllGather, Collective::ReduceScatter,
                        Collective::PointToPoint}) {
    for (int n : {2, 4}) {
      for (double bytes = 8; bytes <= 256e6; bytes *= 8) {
        CollectiveSample s{op, n, bytes, collective_time_s(op, bytes, n, link)};
        // Deterministic +-noise alternating in sign.
        s.time_s *= 1.0 + noise_amplitude * ((i++ % 2) ? 1.0 : -1.0);
        out.push_back(s);
      }
    }
  }
  return out;
}

TEST_CASE("fit_link recovers latency and bandwidth exactly from noiseless samples") {
  LinkSpec truth{12.5e9, 3e-6, 1.0};
  LinkFit fit = fit_link(sweep(truth, 0.0));
  CHECK(fit.link.latency_s == Approx(3e-6).epsilon(1e-9));
  CHECK(fit.link.bandwidth_bytes_per_s == Approx(12.5e9).epsilon(1e-9));
  CHECK(fit.link.efficiency == 1.0);
  CHECK(fit.rms_relative_error < 1e-9);
  CHECK(fit.samples == 72);  // 4 collectives x 2 group sizes x 9 sizes
}

TEST_CASE("fit_link tolerates 5 % noise and reports it") {
  LinkSpec truth{4e9, 20e-6, 1.0};
  LinkFit fit = fit_link(sweep(truth, 0.05));
  CHECK(fit.link.latency_s == Approx(20e-6).epsilon(0.08));
  CHECK(fit.link.bandwidth_bytes_per_s == Approx(4e9).epsilon(0.08));
  CHECK(fit.rms_relative_error > 0.01);
  CHECK(fit.rms_relative_error < 0.08);
}

TEST_CASE("fit_link keeps latency non-negative") {
  // Pure bandwidth data plus a small-message sample that is faster than any positive latency allows.
  std::vector<CollectiveSample> s;
  LinkSpec truth{1e9, 0.0, 1.0};
  for (double b = 1e3; b <= 1e8; b *= 10)
    s.push_back({Collective::PointToPoint, 2, b, collective_time_s(Collective::PointToPoint, b, 2, truth)});
  s[0].time_s *= 0.5;
  LinkFit fit = fit_link(s);
  CHECK(fit.link.latency_s >= 0.0);
  CHECK(fit.link.bandwidth_bytes_per_s > 0.0);
}

TEST_CASE("fit_link caps a bandwidth the samples do not resolve at the profile format's largest") {
  // Time flat in bytes, the largest message a little faster: the free fit's slope is negative.
  std::vector<CollectiveSample> s;
  for (double b = 8; b <= 4e6; b *= 8) s.push_back({Collective::AllReduceRing, 2, b, 50e-6});
  s.back().time_s = 40e-6;
  LinkFit fit = fit_link(s);
  CHECK_FALSE(fit.bandwidth_resolved);
  CHECK(fit.link.bandwidth_bytes_per_s == limits::kMaxLinkGbPerS * 1e9);
  // Latency alone explains the samples: their relative-error mean, 47.9 us, whatever the size.
  CHECK(collective_time_s(Collective::AllReduceRing, 4096, 2, fit.link) == Approx(47.93e-6).epsilon(0.01));
  // A measured slope stays a measurement.
  CHECK(fit_link(sweep(LinkSpec{12.5e9, 3e-6, 1.0}, 0.0)).bandwidth_resolved);
}

TEST_CASE("samples_of selects one collective") {
  auto all = sweep(LinkSpec{1e9, 1e-6, 1.0}, 0.0);
  auto p2p = samples_of(all, Collective::PointToPoint);
  CHECK(p2p.size() == 18);
  for (auto& x : p2p) CHECK(x.op == Collective::PointToPoint);
}

TEST_CASE("GEMM fit and efficiency curve") {
  // t = 2 us + flops / 50 GFLOP/s; two repeats per size, one of them 10 % slower.
  std::vector<GemmSample> s;
  for (double f = 1e4; f <= 1e10; f *= 10) {
    double t = 2e-6 + f / 50e9;
    s.push_back({f, t});
    s.push_back({f, t * 1.1});
    s.push_back({f, t});
  }
  GemmFit fit = fit_gemm(s);
  CHECK(fit.rate_flops_per_s == Approx(50e9).epsilon(0.1));
  double peak = peak_flops_of(s);
  CHECK(peak == Approx(1e10 / (2e-6 + 1e10 / 50e9)));
  auto curve = gemm_efficiency_curve(s, peak);
  REQUIRE(curve.size() == 7);
  CHECK(curve.back().efficiency == Approx(1.0));  // median of {t, t, 1.1t} is t
  for (size_t i = 1; i < curve.size(); ++i) {
    CHECK(curve[i].flops > curve[i - 1].flops);
    CHECK(curve[i].efficiency >= curve[i - 1].efficiency);
  }
  CHECK(curve.front().efficiency == Approx((1e4 / (2e-6 + 1e4 / 50e9)) / peak));
}
