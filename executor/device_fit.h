// Whether a plan's predicted peak memory per rank fits the memory left on the device: `meshplan run
// --backend cuda` checks it after creating the backend and before allocating the model, so a layout
// predicted not to fit is refused with the numbers instead of dying in cudaMalloc.
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"

namespace meshplan::exec {

struct DeviceFitInput {
  uint64_t predicted_peak_bytes = 0;  // cost model's peak per rank for the plan
  uint64_t device_total_bytes = 0;    // cudaMemGetInfo total (0: not a device backend)
  uint64_t device_used_bytes = 0;     // already in use (context, workspace, other processes)
  std::string device_name;
};

/// Ok when the prediction fits in total - used, when `force` is set, or when there is no device
/// (total 0). Otherwise an Error (field --force) naming both figures and the device, with a hint.
Result<bool> check_device_fits(const DeviceFitInput& in, bool force, const std::string& where);

}  // namespace meshplan::exec
