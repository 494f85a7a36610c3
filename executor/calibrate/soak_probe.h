// Sustained-clock soak: one GEMM run back to back for seconds on every rank at once, its rate at the
// end against its burst rate (the sweep's), giving HardwareProfile::sustained_clock_fraction.
#pragma once
#include <functional>
#include <vector>

#include "executor/comm.h"

namespace meshplan::exec {

struct SoakMeasurement {
  double soak_s = 0;                  // seconds run (0 = not measured)
  double burst_s_per_call = 0;        // the call's time as the sweep measured it (short, cold)
  double sustained_s_per_call = 0;    // mean over the last 3 windows, slowest rank
  std::vector<double> window_s_per_call;  // this rank's windows in order (how the clock settled)
  double fraction = 1.0;              // burst / sustained, in (0, 1]; 1 when not measured
};

/// Runs batches of a GEMM call for `soak_s` seconds in about 10 windows and returns the seconds per
/// call of each window. `run_batch(n)` runs n calls and returns their elapsed seconds (device time
/// on a GPU); `per_call_s` sizes the first window.
std::vector<double> soak_windows(const std::function<double(int)>& run_batch, double per_call_s, double soak_s);

/// The soak over every rank of `group` at once (a training step keeps every GPU of a node busy, so
/// the board's shared power and cooling are loaded as they are then): sustained = the slowest rank's
/// mean of its last 3 windows; fraction = burst / sustained, capped at 1.
SoakMeasurement run_soak_probe(Communicator& group, const std::function<double(int)>& run_batch,
                               double burst_s_per_call, double soak_s);

}  // namespace meshplan::exec
