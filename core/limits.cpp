// Range texts and range checks for core/limits.h.
#include "core/limits.h"

#include <cstdio>
#include <cstdlib>

namespace meshplan::limits {

static std::string shortest(double v) {
  char buf[64];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, v);
    if (std::strtod(buf, nullptr) == v) return buf;
  }
  return buf;
}

std::string range_text(int64_t lo, int64_t hi) { return std::to_string(lo) + ".." + std::to_string(hi); }
std::string range_text(double lo, double hi) { return shortest(lo) + ".." + shortest(hi); }

void check_int(ErrorList& errors, const std::string& file, const std::string& field, int64_t v,
               int64_t lo, int64_t hi, const std::string& hint) {
  if (v < lo || v > hi)
    errors.push_back(make_error(file, field, std::to_string(v), "must be in " + range_text(lo, hi), hint));
}

void check_real(ErrorList& errors, const std::string& file, const std::string& field, double v,
                double lo, double hi, const std::string& hint) {
  if (!(v >= lo && v <= hi))
    errors.push_back(make_error(file, field, shortest(v), "must be in " + range_text(lo, hi), hint));
}

}  // namespace meshplan::limits
