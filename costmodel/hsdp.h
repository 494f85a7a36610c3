// Hybrid sharded data parallelism (HSDP): the shard and replica groups, and the gradient reduction
// of one FSDP unit (reduce-scatter inside the shard group, all-reduce of the shard across replicas).
#pragma once
#include "core/hardware_profile.h"
#include "core/parallel_config.h"
#include "costmodel/collectives.h"

namespace meshplan {

/// Ranks one ZeRO shard spans: shard_group * cp under HSDP (core/hsdp_config.h hsdp_enabled), else
/// the whole gradient group dp * cp (costmodel/context_parallel.h grad_group_size). Weights,
/// gradients and optimizer state are divided by this (costmodel/memory.cpp).
int zero_shard_size(const ParallelConfig& cfg);

/// Copies of each shard: dp / shard_group under HSDP, else 1.
int hsdp_replicas(const ParallelConfig& cfg);

/// One shard group: zero_shard_size consecutive ranks of the DP x CP group, tp apart (FSDP's
/// HYBRID_SHARD shards within a node by default; torchtitan's mesh puts dp_shard inside dp_replicate).
GroupPlacement zero_shard_group(const HardwareProfile& hw, const ParallelConfig& cfg);

/// One replica group: hsdp_replicas ranks, tp * zero_shard_size apart (the same shard of every group).
GroupPlacement hsdp_replica_group(const HardwareProfile& hw, const ParallelConfig& cfg);

/// Seconds of one unit's gradient reduction when units follow each other: per_unit_s each, plus
/// drain_s once after the last.
struct HsdpReduce {
  double per_unit_s = 0;
  double drain_s = 0;
};

/// One FSDP unit's gradient reduction given `rs_s`, its reduce-scatter of `bytes` over the shard
/// group. Without HSDP: {rs_s, 0}. With HSDP the reduced shard (bytes / zero_shard_size) is then
/// all-reduced over the replica group (ar). Both FSDP1 (_runtime_utils._reduce_grad: dist.all_reduce
/// on state._all_reduce_stream after the reduce-scatter on the post-backward stream) and FSDP2
/// (_fsdp_collectives.foreach_reduce: all_reduce_stream waits for reduce_scatter_stream) run the
/// all-reduce on its own stream, so unit i's all-reduce overlaps unit i+1's reduce-scatter. When the
/// shard group stays inside an NVLink domain and the replicas span nodes, the two use different links
/// and pipeline: per_unit = max(rs, ar), drain = min(rs, ar). Otherwise they share the network:
/// per_unit = rs + ar, drain = 0.
HsdpReduce hsdp_unit_reduce(const HardwareProfile& hw, const ParallelConfig& cfg, double rs_s, double bytes);

/// One pass of a stage's per-unit gradient reductions over the shard group `g`: `layers` units of
/// `layer_bytes` and the root unit's `ends_bytes`, each reduce-scattered and (under HSDP) joined by
/// hsdp_unit_reduce. layer_s is one layer's share; ends_s the root unit's plus the last layer's drain.
struct HsdpPassReduce {
  double layer_s = 0;
  double ends_s = 0;
};
HsdpPassReduce hsdp_pass_reduce(const HardwareProfile& hw, const ParallelConfig& cfg, const GroupPlacement& g,
                                int layers, double layer_bytes, double ends_bytes);

/// ZeRO-1 under HSDP: Megatron's partial distributed optimizer (--num-distributed-optimizer-instances)
/// reduce-scatters each bucket group within its instance and then all-reduces the shard across the
/// instances on the same communication stream (megatron/core/distributed/param_and_grad_buffer.py
/// start_grad_sync: "NCCL Stream: RS ... AR"), so one step's gradient reduction takes rs_s + ar, ar
/// the all-reduce of bytes / zero_shard_size over the replica group. Without HSDP: rs_s.
double hsdp_serial_reduce_s(const HardwareProfile& hw, const ParallelConfig& cfg, double rs_s, double bytes);

}  // namespace meshplan
