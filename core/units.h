// Units carried in names and types: bytes, seconds, FLOPs, nanoseconds of simulated time.
#pragma once
#include <cstdint>

namespace meshplan {

/// Analytical quantities are doubles with the unit in the name (`weights_bytes`, `step_s`).
/// Simulated time is integer nanoseconds so that event order is exact and reproducible.
using Nanoseconds = int64_t;

constexpr double kGB = 1e9;          // decimal gigabyte (datasheets, the seeds' arithmetic)
constexpr double kGiB = 1073741824.0;
constexpr double kTera = 1e12;

inline Nanoseconds seconds_to_ns(double seconds) {
  return static_cast<Nanoseconds>(seconds * 1e9 + 0.5);
}
inline double ns_to_seconds(Nanoseconds ns) { return static_cast<double>(ns) * 1e-9; }

}  // namespace meshplan
