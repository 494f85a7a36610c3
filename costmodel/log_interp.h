// Piecewise log-linear interpolation on an ascending axis: the published tables the cost model reads
// by size (torchao's FP8 speedups by M, K, N) or by length (fused attention speed by sequence).
#pragma once
#include <cstddef>
#include <vector>

namespace meshplan {

/// x lies between axis[i] and axis[i + 1]; w in [0, 1] is the weight of axis[i + 1], linear in
/// log(x). Clamped: below the first point i = 0, w = 0; above the last i = size - 2, w = 1. A
/// one-point axis gives i = 0, w = 0 (the caller must not read axis[1]).
struct LogBracket {
  size_t i = 0;
  double w = 0.0;
};
LogBracket log_bracket(const std::vector<double>& axis, double x);

/// values at x, log-linear between the bracketing points of `axis` (same length, at least one).
double log_interpolate(const std::vector<double>& axis, const std::vector<double>& values, double x);

}  // namespace meshplan
