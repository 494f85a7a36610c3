// Expert-layer parameters per GPU under EP x ETP, and their ZeRO sharding over the expert-data group.
#pragma once
#include "core/parallel_config.h"
#include "costmodel/memory.h"

namespace meshplan {

/// Fraction of the layers whose MLP is an MoE (num_moe_layers / L); 0 for dense models. The cost
/// model works with the mean layer (as ModelSpec::layer_parameters does), so every per-layer MoE
/// term below is weighted by it.
double moe_layer_fraction(const ModelSpec& m);

/// Routed-expert parameters of the mean layer (num_moe_layers * E * expert_parameters / L): the
/// part of layer_parameters() that EP x ETP shards instead of TP. 0 for dense models.
double routed_parameters_per_layer(const ModelSpec& m);

/// Routed-expert parameters of the mean layer held by one GPU: each of the ep ranks holds E/ep whole
/// experts, each split etp ways (Megatron-Core EP and ETP). Shared experts and the router follow the
/// dense part (TP), as Megatron-Core's README says ("the shared experts ... are replicated in EP ranks").
double expert_layer_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg);

/// Routed-expert parameters of one model chunk / one pipeline rank, per GPU.
double chunk_expert_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int chunk);
double stage_expert_parameters_per_gpu(const ModelSpec& m, const ParallelConfig& cfg, int stage);

/// Weights, gradients and optimizer bytes of pipeline rank `stage`'s routed experts on one GPU:
/// ZeRO shards them over the expert-data-parallel group edp = tp*cp*dp / (ep*etp) (Megatron-Core's
/// distributed optimizer keeps a separate expert-data-parallel buffer), not over dp.
StaticBytes stage_expert_static_bytes(const Problem& p, const ParallelConfig& cfg, int stage);

}  // namespace meshplan
