// FSDP2 under a pipeline schedule: static bytes, DP seconds and copies (costmodel/fsdp2_pipeline.h).
#include "costmodel/fsdp2_pipeline.h"

#include <algorithm>

#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/hsdp.h"
#include "costmodel/zero_comm.h"

namespace meshplan {

bool pipeline_keeps_unsharded(const Problem& p, const ParallelConfig& cfg) {
  return p.job.knobs.sharding.pipeline_keeps_unsharded && cfg.pp > 1 && cfg.zero_stage >= 2 &&
         grad_group_size(cfg) > 1;
}

StaticBytes pipeline_unsharded_static_bytes(const Problem& p, double params, const StaticBytes& base) {
  StaticBytes out = base;
  out.weights = params * param_bytes(p.job).weights;
  out.gradients = params * kFsdp2ReduceBytes;
  return out;
}

DpComm pipeline_unsharded_dp_comm(const Problem& p, const ParallelConfig& cfg, int stage, const StageTimes& st) {
  const ShardedCollectives c = sharded_collectives(p, cfg, stage, zero_shard_group(p.hardware, cfg));
  const double L = static_cast<double>(c.layers);
  const double gather = c.gather_ends_s + L * c.gather_layer_s;
  const double reduce = L * c.reduce_layer_s + c.reduce_ends_s;
  DpComm out;
  out.total_s = gather + reduce;
  if (!cfg.dp_overlap || p.job.knobs.sharding.prefetch_depth <= 0 || c.layers == 0) {
    out.exposed_s = out.total_s;
    return out;
  }
  // The layer's FSDP2 copies run on the compute stream and cover the gather too (step.cpp).
  const double x_f = st.forward_s / L + pipeline_copy_times(p, cfg).forward_s;
  const double f = c.prefetch_fraction;
  const double miss = (1.0 - f) * c.gather_layer_s + std::max(0.0, f * c.gather_layer_s - x_f);
  out.exposed_s = c.gather_ends_s + c.gather_layer_s + (L - 1.0) * miss + reduce;
  return out;
}

Fsdp2CopyTimes pipeline_copy_times(const Problem& p, const ParallelConfig& cfg) {
  return pipeline_copy_times(p, cfg, layer_parameters_per_gpu(p.model, cfg.tp), zero_shard_size(cfg));
}

Fsdp2CopyTimes pipeline_copy_times(const Problem& p, const ParallelConfig& cfg, double P, int shards) {
  const double d = static_cast<double>(std::max(1, shards));
  const double e = activation_element_bytes(p.job.dtype);
  const double r = kFsdp2ReduceBytes;
  const double M = static_cast<double>(std::max<int64_t>(1, cfg.num_micro_batches));
  const double gather = (4.0 + e) * P / d + 2.0 * e * P;
  const double reduce = 2.0 * r * P + (r + 8.0) * P / d;
  const double accumulate = ((e + r) + (M - 1.0) * (e + 2.0 * r)) * P / M;
  return Fsdp2CopyTimes{memory_bound_time_s(p.hardware, gather / M),
                        memory_bound_time_s(p.hardware, reduce / M + accumulate)};
}

}  // namespace meshplan
