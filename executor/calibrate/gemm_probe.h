// GEMM probe: times Backend::gemm over a sweep of sizes in the three layouts a linear layer uses,
// on every rank at once, and checks each product against a double-precision reference.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/fit.h"
#include "executor/backend.h"
#include "executor/calibrate/probe_timer.h"

namespace meshplan::exec {

struct GemmShape {
  int64_t M = 0, N = 0, K = 0;
  double flops() const { return 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K); }
};

struct GemmMeasurement {
  GemmShape shape;
  double time_s = 0;          // one call, median over this rank's repeats, median over ranks
  double max_rel_error = 0;   // largest relative error of the sampled entries vs the reference
  bool verified = false;      // max_rel_error <= 1e-4
};

/// Square shapes n = 16 .. max_n (factor ~1.5), plus two tall-skinny model-like shapes per n.
/// Each shape is timed in the three layouts of a linear layer (y = x W^T, dx = dy W, dW = dy^T x)
/// and its time is their mean; the NT product (y = x W^T) is the one verified.
std::vector<GemmShape> default_gemm_shapes(int64_t max_n);

/// Runs the sweep; every rank of `group` measures at the same time (like a training step, where
/// every rank computes at once), and each time is the median over ranks.
std::vector<GemmMeasurement> run_gemm_probe(Backend& backend, Communicator& group,
                                            const std::vector<GemmShape>& shapes,
                                            double target_s, const ProgressFn& progress);

/// Samples for fit.h (flops, time).
std::vector<GemmSample> gemm_samples(const std::vector<GemmMeasurement>& m);

}  // namespace meshplan::exec
