// The planner's ZeRO choices with hybrid sharding (HSDP): which shard groups each layout tries.
#pragma once
#include <vector>

#include "core/parallel_config.h"
#include "planner/enumerate.h"

namespace meshplan {

/// HSDP shard groups (in DP ranks) a layout of `dp` ranks tries besides plain sharding: the --shard-group
/// list when given (values dividing dp and below it; 0 or dp mean plain), else the DP ranks of one NVLink
/// domain g = nvlink_domain / (tp * cp) (at least 1) times 1, 2, 4, ... while below dp and dividing it:
/// FSDP's HYBRID_SHARD default is one node, and larger groups trade replica traffic for memory.
/// Empty when the framework has no hybrid sharding (FrameworkSpec::hybrid_sharding) or for MoE models
/// (HSDP is not costed with expert parallelism; `estimate --ep 1 --shard-group` still costs it).
std::vector<int> hsdp_shard_groups(const Problem& p, const SearchSpace& s, const LayoutDims& d);

/// The layout's ZeRO choices in search order: every stage of d.zeros with shard group 0 (unless a
/// --shard-group list leaves 0 out, which drops plain ZeRO 1/2/3), then ZeRO 1, 2 and 3 (those the
/// framework runs: 2 and 3 under fsdp/torchtitan, 1 under megatron) with each HSDP shard group.
std::vector<ZeroChoice> sharding_choices(const Problem& p, const SearchSpace& s, const LayoutDims& d);

}  // namespace meshplan
