// DP reduction bytes per parameter and the fp32 accumulation pass (costmodel/grad_accumulation.h).
#include "costmodel/grad_accumulation.h"

#include "costmodel/compute_time.h"
#include "costmodel/memory.h"

namespace meshplan {

double grad_reduce_bytes_per_param(const Problem& p) {
  const double knob = p.job.knobs.dp_reduce_bytes;
  return knob > 0 ? knob : param_bytes(p.job).gradients;
}

double grad_accumulation_pass_s(const Problem& p, const ParallelConfig& cfg, int chunk) {
  if (!p.job.knobs.grad_accumulation_pass) return 0.0;
  return memory_bound_time_s(p.hardware, kGradAccumulationPassBytes * chunk_parameters_per_gpu(p.model, cfg, chunk));
}

}  // namespace meshplan
