// Memory-bandwidth probe: an axpy (y += a x, reads x and y, writes y: 12 bytes per element) over
// arrays far larger than the caches, run by every rank at once, result checked.
#pragma once
#include <cstdint>

#include "executor/backend.h"
#include "executor/calibrate/probe_timer.h"

namespace meshplan::exec {

struct BandwidthMeasurement {
  int64_t elements = 0;
  double bytes_per_call = 0;   // 12 * elements
  double time_s = 0;           // median over ranks of each rank's median call
  double bytes_per_s = 0;      // per rank, all ranks streaming together
  bool verified = false;       // y holds the expected values afterwards
};

BandwidthMeasurement run_memory_probe(Backend& backend, Communicator& group, int64_t bytes_per_array,
                                      double target_s);

}  // namespace meshplan::exec
