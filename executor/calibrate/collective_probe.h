// Collective probe (nccl-tests style): all-reduce, all-gather, reduce-scatter and ring send/recv
// over the ranks calibrate runs on, sizes 8 B .. max_bytes, each size timed and then verified.
#pragma once
#include <cstdint>
#include <vector>

#include "costmodel/collectives.h"
#include "costmodel/fit.h"
#include "executor/calibrate/probe_timer.h"
#include "executor/comm.h"

namespace meshplan::exec {

/// nccl-tests definitions (doc/PERFORMANCE.md): size = all-reduce buffer, all-gather output,
/// reduce-scatter input, p2p message; algbw = size / time; busbw = algbw * factor with factor
/// 2(n-1)/n for all-reduce, (n-1)/n for all-gather and reduce-scatter, 1 for send/recv.
struct CollectiveMeasurement {
  Collective op = Collective::AllReduceRing;
  int ranks = 1;
  double bytes = 0;     // actual size after rounding to whole floats per rank
  double time_s = 0;    // one call, max over ranks
  double algbw_bytes_per_s = 0;
  double busbw_bytes_per_s = 0;
  bool verified = false;
};

struct CollectiveSweep {
  double min_bytes = 8;
  double max_bytes = 256e6;
  double size_factor = 4;     // next size = size * factor
  double target_s = 0.05;     // timed iterations per size last about this long
  double max_call_s = 1.0;    // stop growing an op's size once one call takes longer
  double budget_s = 60;       // all four sweeps together stop growing after this long
};

std::vector<CollectiveMeasurement> run_collective_probe(Communicator& group, const CollectiveSweep& sweep,
                                                        const ProgressFn& progress);

/// Samples for fit.h.
std::vector<CollectiveSample> collective_samples(const std::vector<CollectiveMeasurement>& m);

}  // namespace meshplan::exec
