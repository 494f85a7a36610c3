// check_device_fits: predicted peak per rank against the device's free memory.
#include "executor/device_fit.h"

#include <cstdio>

namespace meshplan::exec {

namespace {
std::string gb(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2f GB", static_cast<double>(bytes) / 1e9);
  return buf;
}
}  // namespace

Result<bool> check_device_fits(const DeviceFitInput& in, bool force, const std::string& where) {
  if (force || in.device_total_bytes == 0) return true;
  const uint64_t available = in.device_total_bytes > in.device_used_bytes ? in.device_total_bytes - in.device_used_bytes : 0;
  if (in.predicted_peak_bytes <= available) return true;
  return make_error(where, "memory", gb(in.predicted_peak_bytes),
                    "the plan is predicted to need " + gb(in.predicted_peak_bytes) + " per rank but " +
                        in.device_name + " has " + gb(available) + " free of " + gb(in.device_total_bytes),
                    "pick a plan with more ZeRO/TP/PP, recompute or a smaller micro-batch, or pass --force to try anyway");
}

}  // namespace meshplan::exec
