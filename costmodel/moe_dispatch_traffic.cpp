// Token permutation traffic of the alltoall dispatcher (costmodel/moe_dispatch_traffic.h).
#include "costmodel/moe_dispatch_traffic.h"

namespace meshplan {

DispatchTraffic dispatch_traffic_bytes(double routed, double h, int etp, int local_experts, double elem_bytes) {
  DispatchTraffic t;
  if (routed <= 0.0) return t;
  const double row = (h + 1.0) * elem_bytes;             // one routed row of h plus its probability
  const double read_write = 2.0 * routed * row;          // one pass over the routed rows
  const double passes_local = 2.0;                       // permute 1 + unpermute
  const double passes_sorted = local_experts > 1 ? 2.0 * etp : 0.0;  // sort + unsort, after ETP gather
  t.forward_bytes = (passes_local + passes_sorted) * read_write;
  t.backward_bytes = t.forward_bytes;
  return t;
}

}  // namespace meshplan
