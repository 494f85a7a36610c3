// Goodput of a long run under GPU failures: job MTBF, Young/Daly optimal checkpoint interval and
// the expected fraction of wall time that is useful work at a given interval.
#pragma once
#include "core/error.h"

namespace meshplan {

struct GoodputInput {
  double gpus = 1;             // GPUs whose failures stop the job (any one failing restarts it)
  double gpu_mtbf_hours = 0;   // mean time between failures of one GPU (with its share of host)
  double checkpoint_s = 0;     // C: time to write one checkpoint (the job is paused meanwhile)
  double restart_s = 0;        // R: time from a failure to training again (detect, restart, load)
  double interval_s = 0;       // tau: useful compute time between checkpoints to evaluate (0 = none)
  double step_s = 0;           // one training step (checkpoints land on step boundaries)
};

struct GoodputReport {
  double job_mtbf_s = 0;        // M = gpu_mtbf / gpus (independent exponential failures)
  double young_interval_s = 0;  // sqrt(2 C M)                         (Young 1974)
  double daly_interval_s = 0;   // sqrt(2 C M) [1 + sqrt(C/2M)/3 + (C/2M)/9] - C, or M when C >= 2M (Daly 2006)
  double goodput_at_daly = 0;   // expected useful / wall time at the Daly interval
  double goodput_at_interval = 0;  // the same at interval_s (0 when not given)
  double first_order_at_interval = 0;  // 1 - C/tau - (tau/2 + R)/M, the textbook approximation
  double failures_per_day = 0;  // 86400 / M
  double steps_per_interval = 0;  // interval_s / step_s (0 when either is 0)
};

/// Errors name the flag (--gpu-mtbf-hours, --checkpoint-s, --restart-s, --checkpoint-interval-min).
Result<GoodputReport> goodput(const GoodputInput& in);

/// Daly (2006) expected wall time per unit of useful work for exponential failures with mean M,
/// interval tau, checkpoint C, restart R:  M e^{R/M} (e^{(tau+C)/M} - 1) / tau. Goodput = 1 / that.
double daly_goodput(double tau_s, double checkpoint_s, double restart_s, double mtbf_s);

}  // namespace meshplan
