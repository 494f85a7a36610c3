// Numbers for people: SI-style suffixes for counts, durations and bytes (3 significant digits).
#include "core/human_format.h"

#include <cmath>
#include <cstdio>

namespace meshplan {

namespace {

std::string three_digits(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

std::string non_finite(double v) { return v > 0 ? "inf" : (v < 0 ? "-inf" : "nan"); }

std::string with_unit(const std::string& num, const std::string& unit) {
  return unit.empty() ? num : num + " " + unit;
}

// Scales `v` by the largest step (1000^k) whose suffix keeps |v| >= 1, rounding first so that
// 999,999 prints as "1M" and not "1e+03K".
std::string scaled(double v, const char* const* suffixes, int n) {
  const double a = std::fabs(v);
  int k = 0;
  double s = v;
  while (k + 1 < n && std::fabs(std::stod(three_digits(a / std::pow(1000.0, k)))) >= 1000.0) {
    ++k;
    s = v / std::pow(1000.0, k);
  }
  return three_digits(s) + suffixes[k];
}

}  // namespace

std::string human_count(double v, const std::string& unit) {
  if (!std::isfinite(v)) return with_unit(non_finite(v), unit);
  static const char* const kSuffix[] = {"", "K", "M", "B", "T", "P"};
  if (std::fabs(std::stod(three_digits(v))) < 1000.0) return with_unit(three_digits(v), unit);  // 999.7 -> 1K
  return with_unit(scaled(v, kSuffix, 6), unit);
}

std::string human_scientific(double v) {
  if (!std::isfinite(v)) return non_finite(v);
  if (v == 0.0 || (std::fabs(v) < 1e4 && std::fabs(v) >= 1e-3)) return three_digits(v);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2e", v);  // "8.40e+23"
  std::string s = buf;
  const size_t e = s.find('e');
  std::string mant = s.substr(0, e), ex = s.substr(e + 1);
  while (mant.find('.') != std::string::npos && (mant.back() == '0' || mant.back() == '.')) {
    const bool dot = mant.back() == '.';
    mant.pop_back();
    if (dot) break;
  }
  const bool neg = ex[0] == '-';
  ex = ex.substr(1);
  while (ex.size() > 1 && ex[0] == '0') ex.erase(0, 1);
  return mant + "e" + (neg ? "-" : "") + ex;
}

std::string human_seconds(double seconds) {
  if (!std::isfinite(seconds)) return non_finite(seconds) + " s";
  const double a = std::fabs(seconds);
  if (a == 0.0) return "0 s";
  if (a >= 86400.0 * 2) return three_digits(seconds / 86400.0) + " days";
  if (a >= 3600.0 * 2) return three_digits(seconds / 3600.0) + " h";
  if (a >= 1.0) return three_digits(seconds) + " s";
  if (a >= 1e-3) return three_digits(seconds * 1e3) + " ms";
  return three_digits(seconds * 1e6) + " us";
}

std::string human_bytes(double bytes) {
  if (!std::isfinite(bytes)) return non_finite(bytes) + " B";
  static const char* const kSuffix[] = {" B", " kB", " MB", " GB", " TB", " PB"};
  return scaled(bytes, kSuffix, 6);
}

}  // namespace meshplan
