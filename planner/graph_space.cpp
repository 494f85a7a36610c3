// CUDA-graph domain of the search (planner/graph_space.h).
#include "planner/graph_space.h"

#include <algorithm>

#include "core/cuda_graphs.h"

namespace meshplan {

void restrict_to_graphs(const Problem& p, LayoutDims& d) {
  const uint32_t g = p.job.knobs.cuda_graphs;
  if (g == 0 || g == kGraphFullIteration) return;
  d.recomputes.erase(std::remove(d.recomputes.begin(), d.recomputes.end(), Recompute::Full), d.recomputes.end());
}

}  // namespace meshplan
