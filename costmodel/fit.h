// Fitting hardware-profile parameters from calibration measurements (least squares, Eigen inside).
// Measurements come from `meshplan calibrate` (executor/calibrate); results go into a HardwareProfile.
#pragma once
#include <vector>

#include "core/hardware_profile.h"
#include "costmodel/collectives.h"

namespace meshplan {

/// One timed collective: nccl-tests "size" convention (all-reduce input, all-gather output,
/// reduce-scatter input, p2p message), `ranks` participants, median time of one call.
struct CollectiveSample {
  Collective op = Collective::AllReduceRing;
  int ranks = 2;
  double bytes = 0;
  double time_s = 0;
};

/// Alpha-beta parameters of one link tier, fitted so that collective_time_s(op, bytes, ranks, link)
/// reproduces the samples: t = steps(op, n) * latency_s + factor(op, n) * bytes / bandwidth.
/// efficiency is 1: the fitted bandwidth is what was achieved.
struct LinkFit {
  LinkSpec link;
  double rms_relative_error = 0;  // sqrt(mean((model - measured)^2 / measured^2)) over the samples
  int samples = 0;
  // False when the samples' time did not grow with bytes (a latency-bound or noisy sweep): the
  // bandwidth is then the largest a profile holds (limits::kMaxLinkGbPerS), not a measurement.
  bool bandwidth_resolved = true;
};

/// Least squares in relative error (each row divided by its measured time, so 8 B and 256 MB
/// messages weigh alike). Latency and inverse bandwidth are kept non-negative: when the free fit
/// makes one negative it is pinned to 0 and the other refitted. The bandwidth is capped at the
/// largest a hardware profile accepts (core/limits.h), so a calibrated profile always reads back.
/// Needs >= 2 samples with ranks > 1.
LinkFit fit_link(const std::vector<CollectiveSample>& samples);

/// Samples of one collective only (for per-collective reports).
std::vector<CollectiveSample> samples_of(const std::vector<CollectiveSample>& all, Collective op);

/// One timed GEMM: flops = 2*m*n*k, median time of one call.
struct GemmSample {
  double flops = 0;
  double time_s = 0;
};

/// Saturating model t = overhead_s + flops / rate_flops_per_s, fitted in relative error.
struct GemmFit {
  double overhead_s = 0;
  double rate_flops_per_s = 0;
  double rms_relative_error = 0;
};
GemmFit fit_gemm(const std::vector<GemmSample>& samples);

/// Peak FLOP/s: the best achieved rate among the samples (so every efficiency is <= 1).
double peak_flops_of(const std::vector<GemmSample>& samples);

/// Efficiency curve: one point per distinct flops value (median achieved rate / peak), ascending.
std::vector<EfficiencyPoint> gemm_efficiency_curve(const std::vector<GemmSample>& samples,
                                                   double peak_flops_per_s);

}  // namespace meshplan
