// Dispatch plan and the EP all-to-all of token rows (see moe_dispatch.h).
#include "executor/model/moe_dispatch.h"

#include <algorithm>
#include <cassert>
#include <numeric>

#include "executor/backend.h"

namespace meshplan::exec {

int64_t DispatchPlan::total_sent() const {
  return std::accumulate(send_rows.begin(), send_rows.end(), int64_t{0});
}
int64_t DispatchPlan::total_received() const {
  return std::accumulate(recv_rows.begin(), recv_rows.end(), int64_t{0});
}

DispatchPlan plan_dispatch(const Routing& r, int64_t num_experts, const GroupContext& ep) {
  assert(num_experts % ep.size == 0);
  DispatchPlan p;
  p.ep = ep.size;
  p.local_experts = num_experts / ep.size;
  const int64_t slots = r.tokens * r.k;
  // Counting sort by expert (= by (rank, local expert), experts being contiguous per rank),
  // slots in increasing order inside each expert.
  std::vector<int64_t> per_expert(num_experts, 0);
  for (int64_t s = 0; s < slots; ++s) ++per_expert[r.expert[s]];
  std::vector<int64_t> start(num_experts + 1, 0);
  for (int64_t e = 0; e < num_experts; ++e) start[e + 1] = start[e] + per_expert[e];
  p.send_pos.resize(slots);
  for (int64_t s = 0; s < slots; ++s) p.send_pos[s] = start[r.expert[s]]++;
  p.send_rows.assign(ep.size, 0);
  std::vector<float> counts(per_expert.begin(), per_expert.end());  // (ep, El), exact below 2^24
  for (int64_t e = 0; e < num_experts; ++e) p.send_rows[e / p.local_experts] += per_expert[e];
  std::vector<float> got(counts.size());
  if (ep.active()) {
    const std::vector<int64_t> block(ep.size, p.local_experts);
    ep.group->all_to_all_v(counts.data(), block.data(), got.data(), block.data());
  } else {
    got = counts;
  }
  p.recv_counts.assign(got.size(), 0);
  p.recv_rows.assign(ep.size, 0);
  for (size_t i = 0; i < got.size(); ++i) {
    p.recv_counts[i] = static_cast<int64_t>(got[i]);
    p.recv_rows[i / p.local_experts] += p.recv_counts[i];
  }
  return p;
}

void exchange_rows(const DispatchPlan& plan, const GroupContext& ep, const float* in, float* out,
                   int64_t C, bool reverse, Backend& backend) {
  const std::vector<int64_t>& from = reverse ? plan.recv_rows : plan.send_rows;
  const std::vector<int64_t>& to = reverse ? plan.send_rows : plan.recv_rows;
  if (!ep.active()) {
    backend.copy(out, in, static_cast<uint64_t>(from[0] * C) * 4);
    return;
  }
  std::vector<int64_t> send(ep.size), recv(ep.size);
  for (int p = 0; p < ep.size; ++p) {
    send[p] = from[p] * C;
    recv[p] = to[p] * C;
  }
  backend.synchronize();  // the rows were written by queued device work
  ep.group->all_to_all_v(in, send.data(), out, recv.data());
}

}  // namespace meshplan::exec
