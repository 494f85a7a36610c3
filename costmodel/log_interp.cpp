// log_bracket / log_interpolate (costmodel/log_interp.h).
#include "costmodel/log_interp.h"

#include <cassert>
#include <cmath>

namespace meshplan {

LogBracket log_bracket(const std::vector<double>& axis, double x) {
  assert(!axis.empty());
  if (axis.size() == 1 || x <= axis.front()) return {0, 0.0};
  if (x >= axis.back()) return {axis.size() - 2, 1.0};
  size_t i = 0;
  while (i + 2 < axis.size() && x > axis[i + 1]) ++i;
  return {i, std::log(x / axis[i]) / std::log(axis[i + 1] / axis[i])};
}

double log_interpolate(const std::vector<double>& axis, const std::vector<double>& values, double x) {
  assert(axis.size() == values.size() && !axis.empty());
  const LogBracket b = log_bracket(axis, x);
  if (axis.size() == 1) return values.front();
  return values[b.i] + b.w * (values[b.i + 1] - values[b.i]);
}

}  // namespace meshplan
