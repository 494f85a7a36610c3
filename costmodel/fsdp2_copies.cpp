// FSDP2 copy-in / copy-out bytes per block (costmodel/fsdp2_copies.h).
#include "costmodel/fsdp2_copies.h"

#include <algorithm>

namespace meshplan {

EagerBytes fsdp2_copy_bytes(double P, int fsdp_degree, double e, double r) {
  const double d = static_cast<double>(std::max(1, fsdp_degree));
  const double gather = (4.0 + e) * P / d + 2.0 * e * P;
  const double reduce = (e + r) * P + (r + 8.0) * P / d;
  return EagerBytes{gather, gather + reduce};
}

}  // namespace meshplan
