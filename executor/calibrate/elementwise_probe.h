// Element-wise probe: the executor's own element-wise kernels (RMSNorm, SwiGLU, rotary, forward
// and backward) over large arrays, as bytes moved per second: compared with the plain axpy
// bandwidth it gives the profile's hbm_efficiency ("achievable fraction for element-wise kernels").
#pragma once
#include <cstdint>

#include "executor/backend.h"
#include "executor/calibrate/probe_timer.h"

namespace meshplan::exec {

struct ElementwiseMeasurement {
  int64_t rows = 0, cols = 0;   // (N, C) activations; SwiGLU and rotary over N*C elements
  double bytes = 0;             // fp32 bytes the six kernels read and write, summed
  double time_s = 0;            // the six kernels once, median over ranks
  double bytes_per_s = 0;
  bool verified = false;        // sampled outputs match their formulas
};

ElementwiseMeasurement run_elementwise_probe(Backend& backend, Communicator& group, int64_t bytes_per_array,
                                             double target_s);

}  // namespace meshplan::exec
