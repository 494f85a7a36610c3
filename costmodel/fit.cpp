// Least-squares fits (Eigen) of alpha-beta link parameters and GEMM efficiency from measurements.
// The only costmodel file that includes Eigen (layering rule in DESIGN.md).
#include "costmodel/fit.h"

#include <Eigen/Dense>

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>

#include "core/limits.h"

namespace meshplan {

namespace {

// Regressors of one sample taken from the cost model's own formula, so the fit and the model
// cannot drift: collective_time_s is linear in (latency_s, 1 / bandwidth).
double latency_regressor(const CollectiveSample& s) {
  LinkSpec unit_latency{std::numeric_limits<double>::infinity(), 1.0, 1.0};
  return collective_time_s(s.op, s.bytes, s.ranks, unit_latency);
}
double inverse_bandwidth_regressor(const CollectiveSample& s) {
  LinkSpec unit_bandwidth{1.0, 0.0, 1.0};
  return collective_time_s(s.op, s.bytes, s.ranks, unit_bandwidth);
}

// Solves min || (A x - t) / t || for x over the given columns; returns x (size = cols).
Eigen::VectorXd relative_least_squares(const Eigen::MatrixXd& a, const Eigen::VectorXd& t) {
  Eigen::MatrixXd w = a;
  Eigen::VectorXd rhs = Eigen::VectorXd::Ones(t.size());
  for (Eigen::Index i = 0; i < t.size(); ++i) w.row(i) /= t(i);
  return w.colPivHouseholderQr().solve(rhs);
}

double rms_relative(const Eigen::MatrixXd& a, const Eigen::VectorXd& x, const Eigen::VectorXd& t) {
  Eigen::VectorXd rel = ((a * x).array() - t.array()) / t.array();
  return t.size() ? std::sqrt(rel.squaredNorm() / static_cast<double>(t.size())) : 0.0;
}

}  // namespace

LinkFit fit_link(const std::vector<CollectiveSample>& samples) {
  std::vector<CollectiveSample> rows;
  for (const auto& s : samples)
    if (s.ranks > 1 && s.bytes > 0 && s.time_s > 0) rows.push_back(s);
  assert(rows.size() >= 2 && "fit_link needs at least two samples over more than one rank");
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, 0) = latency_regressor(rows[i]);
    a(i, 1) = inverse_bandwidth_regressor(rows[i]);
    t(i) = rows[i].time_s;
  }
  Eigen::VectorXd x = relative_least_squares(a, t);
  if (x(0) < 0 || x(1) <= 0) {
    // Pin the offending parameter and refit the other alone (a one-column least squares).
    const int keep = x(1) <= 0 ? 0 : 1;
    Eigen::VectorXd one = relative_least_squares(a.col(keep), t);
    x.setZero();
    x(keep) = std::max(0.0, one(0));
    if (keep == 0) x(1) = 1e-30;  // bandwidth effectively unbounded: latency explains everything
  }
  LinkFit fit;
  fit.link.latency_s = x(0);
  // 1 / x(1) is the fitted bandwidth; at or above the profile format's ceiling the sweep did not
  // resolve it (x(1) = 1e-30 above, or a slope lost in the noise of a 4 MB --quick sweep).
  const double max_bytes_per_s = limits::kMaxLinkGbPerS * 1e9;
  fit.bandwidth_resolved = x(1) * max_bytes_per_s > 1.0;
  fit.link.bandwidth_bytes_per_s = fit.bandwidth_resolved ? 1.0 / x(1) : max_bytes_per_s;
  fit.link.efficiency = 1.0;
  fit.rms_relative_error = rms_relative(a, x, t);
  fit.samples = static_cast<int>(n);
  return fit;
}

std::vector<CollectiveSample> samples_of(const std::vector<CollectiveSample>& all, Collective op) {
  std::vector<CollectiveSample> out;
  for (const auto& s : all)
    if (s.op == op) out.push_back(s);
  return out;
}

GemmFit fit_gemm(const std::vector<GemmSample>& samples) {
  std::vector<GemmSample> rows;
  for (const auto& s : samples)
    if (s.flops > 0 && s.time_s > 0) rows.push_back(s);
  assert(rows.size() >= 2 && "fit_gemm needs at least two samples");
  const Eigen::Index n = static_cast<Eigen::Index>(rows.size());
  Eigen::MatrixXd a(n, 2);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    a(i, 0) = 1.0;
    a(i, 1) = rows[i].flops;
    t(i) = rows[i].time_s;
  }
  Eigen::VectorXd x = relative_least_squares(a, t);
  if (x(0) < 0) {
    Eigen::VectorXd one = relative_least_squares(a.col(1), t);
    x << 0.0, one(0);
  }
  GemmFit fit;
  fit.overhead_s = x(0);
  fit.rate_flops_per_s = x(1) > 0 ? 1.0 / x(1) : 0.0;
  fit.rms_relative_error = rms_relative(a, x, t);
  return fit;
}

double peak_flops_of(const std::vector<GemmSample>& samples) {
  double best = 0;
  for (const auto& s : samples)
    if (s.time_s > 0) best = std::max(best, s.flops / s.time_s);
  return best;
}

std::vector<EfficiencyPoint> gemm_efficiency_curve(const std::vector<GemmSample>& samples,
                                                   double peak_flops_per_s) {
  assert(peak_flops_per_s > 0);
  std::map<double, std::vector<double>> rates;  // flops -> achieved rates (FLOP/s)
  for (const auto& s : samples)
    if (s.flops > 0 && s.time_s > 0) rates[s.flops].push_back(s.flops / s.time_s);
  std::vector<EfficiencyPoint> curve;
  for (auto& [flops, r] : rates) {
    std::sort(r.begin(), r.end());
    const size_t m = r.size() / 2;
    const double median = r.size() % 2 ? r[m] : 0.5 * (r[m - 1] + r[m]);
    curve.push_back({flops, std::min(1.0, median / peak_flops_per_s)});
  }
  return curve;
}

}  // namespace meshplan
