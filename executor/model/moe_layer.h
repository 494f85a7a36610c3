// MoeStash: what a MoE layer keeps from forward to backward (routing, dispatch plan, the rows this
// rank's experts processed and the combined expert outputs). The layer itself is
// moe_forward_half / moe_backward_half in layer.h.
#pragma once
#include "executor/model/moe_dispatch.h"
#include "executor/model/moe_router.h"
#include "executor/tensor.h"

namespace meshplan::exec {

/// R = rows this rank's experts received (data dependent); N*k = routed slots of its tokens.
struct MoeStash {
  Routing routing;     // host: chosen experts and gates per slot
  DispatchPlan plan;   // host: send order and counts
  Tensor recv_x;       // (R, C) expert inputs, blocks per source rank, per local expert inside
  Tensor gate;         // (R, Fe) x @ Wg^T
  Tensor up;           // (R, Fe) x @ Wu^T
  Tensor act;          // (R, Fe) silu(gate) * up
  Tensor combined;     // (N*k, C) expert outputs back here, in send order
};

}  // namespace meshplan::exec
