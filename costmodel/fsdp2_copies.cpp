// FSDP2 copy-in / copy-out bytes per block (costmodel/fsdp2_copies.h).
#include "costmodel/fsdp2_copies.h"

#include <algorithm>

#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"

namespace meshplan {

EagerBytes fsdp2_copy_bytes(double P, int fsdp_degree, double e, double r) {
  const double d = static_cast<double>(std::max(1, fsdp_degree));
  const double gather = (4.0 + e) * P / d + 2.0 * e * P;
  const double reduce = (e + r) * P + (r + 8.0) * P / d;
  return EagerBytes{gather, gather + reduce};
}

static Fsdp2CopyTimes dense_copy_times(const Problem& p, const ParallelConfig& cfg) {
  if (!p.job.knobs.sharding.fsdp2_copies || grad_group_size(cfg) <= 1) return {};
  if (pipeline_keeps_unsharded(p, cfg)) return pipeline_copy_times(p, cfg);  // one gather, one reduce per step
  if (cfg.zero_stage < 3) return {};
  const EagerBytes b = fsdp2_copy_bytes(layer_parameters_per_gpu(p.model, cfg.tp), zero_shard_size(cfg),
                                        activation_element_bytes(p.job.dtype), kFsdp2ReduceBytes);
  return Fsdp2CopyTimes{memory_bound_time_s(p.hardware, b.forward), memory_bound_time_s(p.hardware, b.backward)};
}

// The block's own parameters plus, under ZeRO-3 with EP, its routed experts over the expert-data
// group (costmodel/expert_fsdp.h): FSDP2 packs and unpacks both.
Fsdp2CopyTimes fsdp2_copy_times(const Problem& p, const ParallelConfig& cfg) {
  Fsdp2CopyTimes t = dense_copy_times(p, cfg);
  const Fsdp2CopyTimes x = expert_fsdp2_copy_times(p, cfg);
  t.forward_s += x.forward_s;
  t.backward_s += x.backward_s;
  return t;
}

}  // namespace meshplan
