// Device guards of `meshplan run` / `calibrate`, kept out of the commands: refuse a plan predicted
// not to fit the device before allocating it, and end on a DeviceError with its one line (exit 1).
#pragma once
#include <cstdint>
#include <string>

#include "core/error.h"
#include "executor/backend.h"
#include "executor/device_error.h"

namespace meshplan::cli {

/// Ok for non-device backends, with `force`, or when `predicted_peak_bytes` fits the device's free
/// memory; else an Error (exit 2) with both figures.
Result<bool> check_fits_device(exec::Backend& backend, uint64_t predicted_peak_bytes, bool force,
                               const std::string& where);

/// Prints the DeviceError's line on stderr; with peers (world_size > 1) ends the whole job
/// (MPI_Abort 1) so they do not wait for this rank; returns kExitFailure.
int end_on_device_error(const exec::DeviceError& e, int world_size);

/// The same for a failed selftest (its lines are already printed).
int end_on_failed_selftest(int world_size);

}  // namespace meshplan::cli
