// Routed-expert parameter split and sharding (costmodel/moe_layout.h).
#include "costmodel/moe_layout.h"

#include <algorithm>

#include "core/moe_config.h"
#include "core/pipeline_placement.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/fsdp2_pipeline.h"
#include "costmodel/mtp.h"
#include "costmodel/pipeline.h"

namespace meshplan {

double moe_layer_fraction(const ModelSpec& m) {
  if (!m.moe.enabled() || m.num_layers <= 0) return 0.0;
  return static_cast<double>(m.num_moe_layers()) / static_cast<double>(m.num_layers);
}

double routed_parameters_per_layer(const ModelSpec& m) {
  if (!m.moe.enabled()) return 0.0;
  return moe_layer_fraction(m) * static_cast<double>(m.moe.num_experts) * m.expert_parameters();
}

double expert_layer_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg) {
  if (!m.moe.enabled()) return 0.0;
  return routed_parameters_per_layer(m) / (static_cast<double>(cfg.ep) * cfg.etp);
}

double chunk_expert_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int chunk) {
  if (!m.moe.enabled()) return 0.0;
  const bool last = chunk == cfg.pp * std::max(1, cfg.virtual_stages) - 1;
  return chunk_layers(m, cfg, chunk) * expert_layer_parameters_per_gpu(m, cfg) +
         (last ? mtp_expert_parameters_per_gpu(m, cfg, last_chunk_rank(cfg)) : 0.0);  // MTP layers: costmodel/mtp.h
}

double stage_expert_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage) {
  if (!m.moe.enabled()) return 0.0;
  return stage_layers(m, cfg, stage) * expert_layer_parameters_per_gpu(m, cfg) +
         mtp_expert_parameters_per_gpu(m, cfg, stage);  // MTP layers: costmodel/mtp.h
}

StaticBytes stage_expert_static_bytes(const Problem& p, const ParallelConfig& cfg, int stage) {
  if (!p.model.moe.enabled()) return StaticBytes{};
  const double params = stage_expert_parameters_per_gpu(p.model, cfg, stage);
  const StaticBytes sharded = static_bytes(params, param_bytes(p.job), cfg.zero_stage, std::max(1, expert_data_parallel(cfg)));
  // FSDP2 under a pipeline keeps the stage's experts gathered all step, as its dense units
  // (costmodel/fsdp2_pipeline.h, costmodel/expert_fsdp.h).
  if (experts_fully_sharded(p, cfg) && pipeline_keeps_unsharded(p, cfg))
    return pipeline_unsharded_static_bytes(p, params, sharded);
  return sharded;
}

}  // namespace meshplan
