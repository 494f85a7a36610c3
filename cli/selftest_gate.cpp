// device_selftest_passes: runs the executor's selftest on a CUDA backend before a run/calibration.
#include "cli/selftest_gate.h"

#include <iostream>
#include <string>

#include "executor/selftest/device_selftest.h"

namespace meshplan::cli {

bool device_selftest_passes(exec::Backend& backend) {
  if (std::string(backend.name()) != "cuda") return true;
  const exec::DeviceSelftest s = exec::run_selftest_on(backend);
  if (s.ok()) return true;
  // Every failing rank reports: the GPU at fault is named by its own rank's line.
  std::cerr << exec::selftest_table(s.report) << exec::selftest_failure_line(s)
            << " (the device fails meshplan's selftest; rerun `meshplan selftest --backend cuda` for the table)\n";
  return false;
}

}  // namespace meshplan::cli
