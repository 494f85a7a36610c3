// Timing harness shared by the calibration probes (nccl-tests style): a warm-up call, an iteration
// count every rank agrees on, the mean time of one call, and a progress report.
#pragma once
#include <functional>
#include <string>

#include "executor/comm.h"

namespace meshplan::exec {

/// Called with the fraction done (0..1) and what is being measured; rank 0 draws the progress bar.
using ProgressFn = std::function<void(double fraction, const std::string& what)>;

/// Wall-clock seconds (steady clock).
double probe_now_s();

/// Times `call` on every rank of `group` together: one warm-up call, then as many calls as fit in
/// `target_s` (the same count on every rank, from the slowest warm-up; 1..max_iters), each
/// preceded by nothing (collectives synchronise themselves). Returns the seconds of one call, the
/// maximum over ranks (the slowest rank is what a training step waits for).
double time_collective_call(Communicator& group, const std::function<void()>& call, double target_s,
                            int max_iters);

/// Times `call` on this rank alone: warm-up, then repeats for at least `target_s` (at most
/// max_iters, at least 3); returns the median seconds of one call.
double time_local_call(const std::function<void()>& call, double target_s, int max_iters);

}  // namespace meshplan::exec
