// A profile number as JSON (core/io_number.h).
#include "core/io_number.h"

#include <cmath>
#include <cstdint>

#include "core/io_detail.h"

namespace meshplan::io_detail {

nlohmann::ordered_json scaled_json(double v, double scale) {
  const double x = scaled_value(v, scale);
  if (x == std::floor(x) && std::fabs(x) < 1e15) return static_cast<int64_t>(x);
  return x;
}

}  // namespace meshplan::io_detail
