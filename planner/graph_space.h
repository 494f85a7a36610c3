// The planner's space under CUDA graph scopes: only the recompute modes Megatron-Core graphs.
#pragma once
#include "core/parallel_config.h"
#include "planner/enumerate.h"

namespace meshplan {

/// Under per-layer CUDA graph scopes (FrameworkKnobs::cuda_graphs set, not full_iteration) drops full
/// recompute: Megatron-Core asserts "full recompute is only supported with full iteration CUDA graph"
/// (core/cuda_graphs.h). Unchanged without graphs or under full_iteration.
void restrict_to_graphs(const Problem& p, LayoutDims& d);

}  // namespace meshplan
