// HSDP groups and gradient reduction (costmodel/hsdp.h).
#include "costmodel/hsdp.h"

#include <algorithm>

#include "core/hsdp_config.h"
#include "costmodel/context_parallel.h"

namespace meshplan {

int zero_shard_size(const ParallelConfig& cfg) {
  return hsdp_enabled(cfg) ? cfg.shard_group * std::max(1, cfg.cp) : grad_group_size(cfg);
}

int hsdp_replicas(const ParallelConfig& cfg) { return hsdp_enabled(cfg) ? cfg.dp / cfg.shard_group : 1; }

GroupPlacement zero_shard_group(const HardwareProfile& hw, const ParallelConfig& cfg) {
  return place_group(hw, zero_shard_size(cfg), cfg.tp);
}

GroupPlacement hsdp_replica_group(const HardwareProfile& hw, const ParallelConfig& cfg) {
  return place_group(hw, hsdp_replicas(cfg), cfg.tp * zero_shard_size(cfg));
}

HsdpPassReduce hsdp_pass_reduce(const HardwareProfile& hw, const ParallelConfig& cfg, const GroupPlacement& g,
                                int layers, double layer_bytes, double ends_bytes) {
  const HsdpReduce lr = hsdp_unit_reduce(hw, cfg, reduce_scatter_s(hw, g, layer_bytes), layer_bytes);
  const HsdpReduce er = hsdp_unit_reduce(hw, cfg, reduce_scatter_s(hw, g, ends_bytes), ends_bytes);
  return {lr.per_unit_s, er.per_unit_s + er.drain_s + (layers > 0 ? lr.drain_s : 0.0)};
}

double hsdp_serial_reduce_s(const HardwareProfile& hw, const ParallelConfig& cfg, double rs_s, double bytes) {
  if (!hsdp_enabled(cfg) || bytes <= 0.0) return rs_s;
  return rs_s + all_reduce_s(hw, hsdp_replica_group(hw, cfg), bytes / zero_shard_size(cfg));
}

HsdpReduce hsdp_unit_reduce(const HardwareProfile& hw, const ParallelConfig& cfg, double rs_s, double bytes) {
  if (!hsdp_enabled(cfg) || bytes <= 0.0) return {rs_s, 0.0};
  const GroupPlacement replicas = hsdp_replica_group(hw, cfg);
  const double ar = all_reduce_s(hw, replicas, bytes / zero_shard_size(cfg));
  if (!zero_shard_group(hw, cfg).spans_nodes() && replicas.spans_nodes())
    return {std::max(rs_s, ar), std::min(rs_s, ar)};
  return {rs_s + ar, 0.0};
}

}  // namespace meshplan
