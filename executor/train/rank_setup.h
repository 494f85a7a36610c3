// What one rank trains: the ChunkSpecs of its local model chunks and its TP context, derived from
// the problem and the parallel configuration (Megatron layout, chunk c*pp + stage on each rank).
#pragma once
#include <vector>

#include "core/error.h"
#include "core/parallel_config.h"
#include "executor/model/model_chunk.h"
#include "planner/rank_grid.h"

namespace meshplan::exec {

/// Specs of the v local chunks of pipeline stage `stage` (index = local chunk). Layers per model
/// chunk come from layers_per_chunk(model, cfg); model chunk g holds the embedding when g == 0
/// and the head when g == pp*v - 1.
std::vector<ChunkSpec> local_chunk_specs(const Problem& p, const ParallelConfig& cfg, int stage,
                                         uint64_t seed);

/// Every reason this plan cannot be executed by this executor (Llama shape, TP divisibility,
/// sequence parallel rows, schedule kinds, a stage without layers), checked for every rank's
/// chunks. `where` names the plan file.
ErrorList validate_executable(const Problem& p, const ParallelConfig& cfg, const std::string& where);

}  // namespace meshplan::exec
