// World: transfers, receives, DP collectives (joined across replicas), optimizer and lane end.
#include <algorithm>
#include <cassert>

#include "simulator/lane_state.h"

namespace meshplan {

Step World::send(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  const Nanoseconds start = std::max(now, s.p2p_free_ns);
  const Nanoseconds end = start + op.dur_ns;
  s.p2p_free_ns = end;
  arrive_ns[op.slot] = end;
  sent_ns[op.slot] = now;
  if (op.dur_ns > 0) span(lane, Stream::P2p, op.kind, op.micro_batch, op.chunk, start, end);
  LaneState& r = lanes[op.peer_lane];
  if (r.blocked_slot == op.slot) {
    r.blocked_slot = -1;
    wake.push_back(Wake{std::max(end, r.idle_since_ns), op.peer_lane});
  }
  ++s.stats.actions;
  ++s.pc;
  return Step{};
}

// Idle time before a message arrives is split: the part while it was on the wire (queued or
// transferring since its send was issued) is exposed p2p time, the rest is pipeline bubble.
Step World::receive(int lane, const Op& op, Nanoseconds now) {
  LaneState& s = lanes[lane];
  const Nanoseconds a = arrive_ns[op.slot];
  if (a < 0 || a > now) {
    if (s.idle_since_ns < 0) s.idle_since_ns = now;
    if (a < 0) {
      s.blocked_slot = op.slot;
      return Step{Step::Block, 0};
    }
    return Step{Step::Wait, a};
  }
  if (s.idle_since_ns >= 0) {
    const Nanoseconds waited = now - s.idle_since_ns;
    const Nanoseconds wire = std::min(waited, a - sent_ns[op.slot]);
    s.stats.p2p_wait_ns += wire;
    s.stats.bubble_ns += waited - wire;
    s.idle_since_ns = -1;
  }
  ++s.stats.actions;
  ++s.pc;
  return Step{};
}

Step World::reduce(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  if (op.dur_ns > 0) {
    const int buckets = p.layers[op.model_chunk];
    const bool after = p.reduce_after_backward[op.model_chunk] != 0;  // post_backward after the last B
    for (int b = 0; b < buckets; ++b)
      issue(lane,
            after ? s.grad_start_ns[op.chunk] + s.grad_dur_ns[op.chunk]
                  : bucket_ready_ns(s.grad_start_ns[op.chunk], s.grad_dur_ns[op.chunk], b, buckets),
            share_ns(op.dur_ns, b, buckets), ActionKind::ReduceGrads, op.chunk, -1, wake);
  }
  ++s.stats.actions;
  ++s.pc;
  (void)now;
  return Step{};
}

Step World::optimizer(int lane, const Op& op, Nanoseconds now) {
  LaneState& s = lanes[lane];
  if (s.coll_next > 0) {  // the DP stream runs in issue order: the last collective ends last
    Nanoseconds waited = 0;
    const Step w = wait_for_coll(lane, s.coll_next - 1, now, waited);
    if (w.kind != Step::Continue) return w;
    s.stats.dp_wait_ns += waited;
  }
  const Nanoseconds end = now + op.dur_ns;
  s.stats.optimizer_ns += op.dur_ns;
  span(lane, Stream::Compute, op.kind, -1, 0, now, end);
  ++s.stats.actions;
  ++s.pc;
  return Step{Step::Yield, end};
}

Step World::wait_for_coll(int lane, int32_t k, Nanoseconds now, Nanoseconds& wait_ns) {
  LaneState& s = lanes[lane];
  const Collective& c = colls[p.rank_of(lane)][k];
  if (c.end_ns < 0 || c.end_ns > now) {
    if (s.idle_since_ns < 0) s.idle_since_ns = now;
    if (c.end_ns < 0) {
      s.blocked_coll = k;
      return Step{Step::Block, 0};
    }
    return Step{Step::Wait, c.end_ns};
  }
  wait_ns = s.idle_since_ns >= 0 ? now - s.idle_since_ns : 0;
  s.idle_since_ns = -1;
  return Step{};
}

int32_t World::issue(int lane, Nanoseconds at, Nanoseconds dur, ActionKind kind, int chunk, int mb,
                     std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  const int rank = p.rank_of(lane);
  auto& list = colls[rank];
  const int32_t k = s.coll_next++;
  if (k == static_cast<int32_t>(list.size())) list.emplace_back();
  Collective& c = list[k];
  assert((c.arrived == 0 || (c.kind == kind && c.dur_ns == dur)) && "replicas issue the same collectives");
  ++c.arrived;
  c.issue_max_ns = std::max(c.issue_max_ns, at);
  c.dur_ns = dur;
  c.kind = kind;
  c.chunk = static_cast<int16_t>(chunk);
  c.micro_batch = mb;
  if (c.arrived == p.replicas) complete(rank, k, wake);
  return k;
}

void World::complete(int rank, int32_t k, std::vector<Wake>& wake) {
  Collective& c = colls[rank][k];
  const Nanoseconds start = std::max(c.issue_max_ns, dp_free_ns[rank]);
  c.end_ns = start + c.dur_ns;
  dp_free_ns[rank] = c.end_ns;
  if (c.dur_ns > 0) dp_busy[rank].emplace_back(start, c.end_ns);
  for (int rep = 0; rep < p.replicas; ++rep) {
    const int l = rep * p.pp + rank;
    if (c.dur_ns > 0) span(l, Stream::Dp, c.kind, c.micro_batch, c.chunk, start, c.end_ns);
    LaneState& o = lanes[l];
    if (o.blocked_coll == k) {
      o.blocked_coll = -1;
      wake.push_back(Wake{std::max(c.end_ns, o.idle_since_ns), l});
    }
  }
}

Step World::finish_lane(int lane, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  const Nanoseconds gather = p.after_gather_ns[p.rank_of(lane)];
  if (gather > 0) {
    if (s.after_coll < 0) s.after_coll = issue(lane, now, gather, ActionKind::OptimizerStep, 0, -1, wake);
    Nanoseconds waited = 0;
    const Step w = wait_for_coll(lane, s.after_coll, now, waited);
    if (w.kind != Step::Continue) return w;
    s.stats.dp_wait_ns += waited;
  }
  assert(s.live == 0 && "every forward's stash is released by its backward");
  s.done = true;
  s.stats.end_ns = now;
  ++done_lanes;
  return Step{Step::Block, 0};
}

SimResult World::finish() {
  res.step_ns = 0;
  res.actions = 0;
  for (int l = 0; l < p.lanes; ++l) {
    res.lanes[l] = lanes[l].stats;
    res.step_ns = std::max(res.step_ns, lanes[l].stats.end_ns);
    res.actions += lanes[l].stats.actions;
  }
  return res;
}

}  // namespace meshplan
