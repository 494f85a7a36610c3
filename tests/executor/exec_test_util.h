// Helpers for the executor core tests: seeded data, error norms, central finite differences.
#pragma once
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <vector>

namespace exec_test {

inline std::vector<float> randn(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

inline std::vector<int32_t> rand_tokens(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> dist(0, vocab - 1);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t& t : v) t = static_cast<int32_t>(dist(gen));
  return v;
}

/// max |a - b| / max |b| (b the reference); 0 when both are all zero.
inline double rel_error(const std::vector<float>& a, const std::vector<float>& b) {
  double diff = 0, ref = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    ref = std::max(ref, std::fabs(static_cast<double>(b[i])));
  }
  return ref == 0 ? diff : diff / ref;
}

/// max |a - b| / max(max |b|, floor): relative error with an absolute floor, for references that
/// are exactly 0 in exact arithmetic (attention's dq, dk at T = 1) where both sides hold only
/// rounding noise and a plain relative error compares noise with noise.
inline double rel_error_floor(const std::vector<float>& a, const std::vector<float>& b, double floor) {
  double diff = 0, ref = floor;
  for (size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::fabs(static_cast<double>(a[i]) - b[i]));
    ref = std::max(ref, std::fabs(static_cast<double>(b[i])));
  }
  return diff / ref;
}

inline double dot(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

/// Worst relative error between analytic[i] and the central difference of loss() at x[i], over
/// `samples` indices spread across x (restored afterwards). Relative to max |analytic|.
inline double fd_error(std::vector<float>& x, const std::vector<float>& analytic,
                       const std::function<double()>& loss, int samples, float eps = 1e-2f) {
  double worst = 0, scale = 1e-12;
  for (float g : analytic) scale = std::max(scale, std::fabs(static_cast<double>(g)));
  const size_t step = std::max<size_t>(1, x.size() / static_cast<size_t>(samples));
  for (size_t i = 0; i < x.size(); i += step) {
    const float saved = x[i];
    x[i] = saved + eps;
    const double up = loss();
    x[i] = saved - eps;
    const double down = loss();
    x[i] = saved;
    const double numeric = (up - down) / (2.0 * eps);
    worst = std::max(worst, std::fabs(numeric - analytic[i]) / scale);
  }
  return worst;
}

}  // namespace exec_test
