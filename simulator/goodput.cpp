// goodput: Young (1974) and Daly (2006, "A higher order estimate of the optimum checkpoint
// interval for restart dumps", FGCS 22) for a job that restarts from its last checkpoint.
#include "simulator/goodput.h"

#include <cmath>
#include <string>

namespace meshplan {

double daly_goodput(double tau, double c, double r, double m) {
  // Expected wall time T_w of T_s useful seconds split in intervals tau, each followed by a
  // checkpoint C; a failure (rate 1/M) costs R plus the lost part of the interval:
  //   T_w = M e^{R/M} (e^{(tau + C)/M} - 1) T_s / tau.
  // expm1 keeps precision when (tau + C) << M.
  return tau / (m * std::exp(r / m) * std::expm1((tau + c) / m));
}

Result<GoodputReport> goodput(const GoodputInput& in) {
  auto bad = [](const char* flag, double v, const char* msg) {
    return make_error("command line", flag, std::to_string(v), msg, "give a positive number");
  };
  if (!(in.gpu_mtbf_hours > 0)) return bad("--gpu-mtbf-hours", in.gpu_mtbf_hours, "must be positive");
  if (!(in.checkpoint_s > 0)) return bad("--checkpoint-s", in.checkpoint_s, "must be positive");
  if (!(in.restart_s >= 0)) return bad("--restart-s", in.restart_s, "must not be negative");
  if (!(in.interval_s >= 0)) return bad("--checkpoint-interval-min", in.interval_s / 60, "must not be negative");
  if (!(in.gpus >= 1)) return bad("--gpus", in.gpus, "needs at least one GPU");
  GoodputReport g;
  const double m = in.gpu_mtbf_hours * 3600.0 / in.gpus;
  const double c = in.checkpoint_s;
  g.job_mtbf_s = m;
  g.failures_per_day = 86400.0 / m;
  g.young_interval_s = std::sqrt(2.0 * c * m);
  const double x = c / (2.0 * m);
  g.daly_interval_s = c < 2.0 * m ? g.young_interval_s * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - c : m;
  g.goodput_at_daly = daly_goodput(g.daly_interval_s, c, in.restart_s, m);
  if (in.interval_s > 0) {
    g.goodput_at_interval = daly_goodput(in.interval_s, c, in.restart_s, m);
    g.first_order_at_interval = 1.0 - c / in.interval_s - (in.interval_s / 2.0 + in.restart_s) / m;
    if (in.step_s > 0) g.steps_per_interval = in.interval_s / in.step_s;
  }
  return g;
}

}  // namespace meshplan
