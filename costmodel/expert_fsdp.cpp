// ZeRO-3 / FSDP over routed experts: group, per-layer collectives, buffers, FSDP2 copies
// (costmodel/expert_fsdp.h).
#include "costmodel/expert_fsdp.h"

#include <algorithm>

#include "core/moe_config.h"
#include "costmodel/activations.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/grad_accumulation.h"
#include "costmodel/moe_layout.h"

namespace meshplan {

namespace {
// Local expert parameters of one MoE layer on one GPU: E/ep experts, each cut etp ways.
double moe_layer_expert_params(const ModelSpec& m, const ParallelConfig& cfg) {
  return static_cast<double>(m.moe.num_experts) * m.expert_parameters() / (static_cast<double>(cfg.ep) * cfg.etp);
}
}  // namespace

bool experts_fully_sharded(const Problem& p, const ParallelConfig& cfg) {
  return p.model.moe.enabled() && cfg.zero_stage >= 3 && expert_data_parallel(cfg) > 1 && grad_group_size(cfg) > 1;
}

GroupPlacement expert_data_group(const HardwareProfile& hw, const ParallelConfig& cfg) {
  return place_group(hw, std::max(1, expert_data_parallel(cfg)), cfg.ep * cfg.etp);
}

ExpertLayerCollectives expert_layer_collectives(const Problem& p, const ParallelConfig& cfg) {
  if (!experts_fully_sharded(p, cfg)) return {};
  const HardwareProfile& hw = p.hardware;
  const GroupPlacement g = expert_data_group(hw, cfg);
  const double pe = moe_layer_expert_params(p.model, cfg);
  const double r = moe_layer_fraction(p.model);
  ExpertLayerCollectives out;
  out.gather_s = r * all_gather_s(hw, g, pe * param_bytes(p.job).weights);
  out.reduce_s = r * reduce_scatter_s(hw, g, pe * grad_reduce_bytes_per_param(p));
  return out;
}

double expert_gather_buffer_bytes(const Problem& p, const ParallelConfig& cfg) {
  if (!experts_fully_sharded(p, cfg)) return 0.0;
  return 2.0 * moe_layer_expert_params(p.model, cfg) * param_bytes(p.job).weights;
}

Fsdp2CopyTimes expert_fsdp2_copy_times(const Problem& p, const ParallelConfig& cfg) {
  if (!p.job.knobs.sharding.fsdp2_copies || !experts_fully_sharded(p, cfg)) return {};
  const double pe = moe_layer_fraction(p.model) * moe_layer_expert_params(p.model, cfg);  // mean layer
  const int edp = expert_data_parallel(cfg);
  if (pipeline_keeps_unsharded(p, cfg)) return pipeline_copy_times(p, cfg, pe, edp);
  const EagerBytes b = fsdp2_copy_bytes(pe, edp, activation_element_bytes(p.job.dtype), kFsdp2ReduceBytes);
  return Fsdp2CopyTimes{memory_bound_time_s(p.hardware, b.forward), memory_bound_time_s(p.hardware, b.backward)};
}

}  // namespace meshplan
