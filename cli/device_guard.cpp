// check_fits_device / end_on_device_error: see device_guard.h.
#include "cli/device_guard.h"

#include <iostream>

#include "cli/commands.h"
#include "executor/backend_factory.h"
#include "executor/device_fit.h"
#include "executor/mpi/mpi_comm.h"

namespace meshplan::cli {

Result<bool> check_fits_device(exec::Backend& backend, uint64_t predicted_peak_bytes, bool force,
                               const std::string& where) {
  const exec::DeviceMemoryReport m = exec::device_memory_report(backend);
  if (!m.is_device) return true;
  exec::DeviceFitInput in;
  in.predicted_peak_bytes = predicted_peak_bytes;
  in.device_total_bytes = m.device_total_bytes;
  in.device_used_bytes = m.device_peak_used_bytes;  // sampled just now: context, workspace, others
  in.device_name = m.device_name;
  return exec::check_device_fits(in, force, where);
}

int end_on_failed_selftest(int world_size) {
  std::cerr << std::flush;
  if (world_size > 1) exec::MpiRuntime::abort_job(kExitFailure);
  return kExitFailure;
}

int end_on_device_error(const exec::DeviceError& e, int world_size) {
  std::cerr << e.what() << "\n";
  return end_on_failed_selftest(world_size);
}

}  // namespace meshplan::cli
