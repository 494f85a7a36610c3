// Layout-independent initialisation: each full tensor from a counter-based generator keyed by
// (global seed, layer, name), then sliced to this TP rank's shard.
#pragma once
#include <cstdint>
#include <vector>

#include "executor/model/param_layout.h"

namespace meshplan::exec {

/// Full (unsharded) initial values of `v` (full_shape, row-major): norms 1; wo, w_down, expert_down
/// N(0, 0.02 / sqrt(2 * num_layers)); everything else N(0, 0.02).
std::vector<float> full_initial_values(const ParamView& v, uint64_t seed, int64_t num_layers);

/// This rank's shard (v.shape) of a full tensor (v.full_shape): slice `tp_rank` along v.split_dim
/// (the EP rank for v.expert_parallel tensors).
std::vector<float> shard_of(const std::vector<float>& full, const ParamView& v, int tp_rank);

/// Standard normal number `index` of the stream `key` (splitmix64 + Box-Muller; pure function).
float normal_at(uint64_t key, uint64_t index);
/// Stream key of (seed, layer, name).
uint64_t stream_key(uint64_t seed, int64_t layer, const std::string& name);

}  // namespace meshplan::exec
