// Token dispatch and combine of a MoE layer across EP ranks: where each (token, slot) row goes in
// the send buffer (grouped by owning rank, then by that rank's local expert), the per-peer counts
// both ways, and the all-to-all that moves (rows, C) blocks over the EP group.
#pragma once
#include <cstdint>
#include <vector>

#include "executor/model/moe_router.h"
#include "executor/model/parallel_groups.h"

namespace meshplan::exec {

class Backend;

/// El = E / ep experts per rank; expert e lives on rank e / El as local expert e % El.
struct DispatchPlan {
  int ep = 1;
  int64_t local_experts = 0;          // El
  std::vector<int64_t> send_pos;      // (N*k) slot s -> row of the send buffer
  std::vector<int64_t> send_rows;     // (ep) rows sent to each rank
  std::vector<int64_t> recv_rows;     // (ep) rows received from each rank
  std::vector<int64_t> recv_counts;   // (ep, El) rows received from rank p for local expert e
  int64_t total_sent() const;
  int64_t total_received() const;
};

/// Collective over the EP group: orders the slots (dest rank, local expert, slot) and exchanges
/// the (ep, El) count matrices so each rank knows what it will receive.
DispatchPlan plan_dispatch(const Routing& r, int64_t num_experts, const GroupContext& ep);

/// Forward dispatch (send -> recv) or, with reverse, combine (recv-side rows back to their
/// senders): an all-to-all of rows of C floats over the EP group; a copy when ep == 1.
void exchange_rows(const DispatchPlan& plan, const GroupContext& ep, const float* in, float* out,
                   int64_t C, bool reverse, Backend& backend);

}  // namespace meshplan::exec
