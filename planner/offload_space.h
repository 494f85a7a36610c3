// The planner's space under activation offloading: only the layouts Megatron-Core can offload with.
#pragma once
#include "core/parallel_config.h"
#include "planner/enumerate.h"

namespace meshplan {

/// Under FrameworkKnobs::activation_offload_layers > 0 keeps recompute none only, and nothing at
/// pp > 1 (core/offload_config.h: Megatron-Core refuses recomputation and pipeline parallelism with
/// CPU offloading). Unchanged when offloading is off.
void restrict_to_offload(const Problem& p, LayoutDims& d);

}  // namespace meshplan
