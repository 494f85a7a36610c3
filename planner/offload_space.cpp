// Activation-offloading domain of the search (planner/offload_space.h).
#include "planner/offload_space.h"

#include <algorithm>

namespace meshplan {

void restrict_to_offload(const Problem& p, LayoutDims& d) {
  if (p.job.knobs.activation_offload_layers <= 0) return;
  if (d.pp > 1) {
    d.recomputes.clear();  // no configuration of this layout can run
    return;
  }
  d.recomputes.erase(std::remove_if(d.recomputes.begin(), d.recomputes.end(),
                                    [](Recompute r) { return r != Recompute::None; }),
                     d.recomputes.end());
}

}  // namespace meshplan
