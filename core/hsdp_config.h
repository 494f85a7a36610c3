// Hybrid sharded data parallelism (HSDP) rules: ZeRO-1/2/3 state sharded within groups of DP ranks,
// replicated across the groups, with named reasons.
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan {

/// True when `cfg` shards its ZeRO state over fewer than all DP ranks: shard_group in (0, dp).
/// shard_group == dp (or 0) is plain ZeRO sharding over the whole DP group.
bool hsdp_enabled(const ParallelConfig& cfg);

/// Errors for a shard_group this configuration cannot run: negative; not dividing dp (every replica
/// holds whole shard groups: torch.distributed.fsdp's HYBRID_SHARD builds the replicate group from
/// ranks one shard group apart, torchtitan's mesh is dp_replicate x dp_shard, Megatron's instances are
/// consecutive DP ranks); set with ZeRO 0, which shards nothing (HYBRID_SHARD and _HYBRID_SHARD_ZERO2
/// are FULL_SHARD and SHARD_GRAD_OP inside the group: ZeRO 3 and 2; Megatron's
/// --num-distributed-optimizer-instances is ZeRO 1 inside it); or with expert parallelism (the expert
/// tensors' sharding over the expert-data group is not costed under HSDP). That the framework runs HSDP at all is validate_framework's
/// (FrameworkSpec::hybrid_sharding).
ErrorList validate_hsdp_config(const ParallelConfig& cfg, const std::string& where);

}  // namespace meshplan
