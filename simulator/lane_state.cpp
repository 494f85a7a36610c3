// World::step: the semantics of every action kind on one lane (see engine.h), driver-independent.
#include "simulator/lane_state.h"

#include <algorithm>
#include <cassert>

namespace meshplan {

World::World(const Program& prog, bool record_spans) : p(prog), spans_(record_spans) {
  lanes.resize(p.lanes);
  for (auto& s : lanes) {
    s.grad_start_ns.assign(p.v, 0);
    s.grad_dur_ns.assign(p.v, 0);
  }
  arrive_ns.assign(p.slots, -1);
  sent_ns.assign(p.slots, -1);
  colls.resize(p.pp);
  dp_busy.resize(p.pp);
  dp_free_ns.assign(p.pp, 0);
  // Next gathered op after each op (for the cross-op prefetch), filled backwards per lane; only
  // ZeRO-3 programs have gathered ops.
  bool gathers = false;
  for (Nanoseconds g : p.gather_ns) gathers = gathers || g > 0;
  next_gathered.resize(p.lanes);
  for (int l = 0; gathers && l < p.lanes; ++l) {
    const auto& ops = p.ops[l];
    std::vector<int> next(ops.size(), -1);
    int after = -1;
    for (int i = static_cast<int>(ops.size()) - 1; i >= 0; --i) {
      next[i] = after;
      if (ops[i].pieces > 1) after = i;
    }
    next_gathered[l] = std::move(next);
  }
  if (p.ep_group > 1) {
    ep_joins.resize(static_cast<size_t>(p.lanes / p.ep_group));
    for (int l = 0; l < p.lanes; ++l) {
      auto& js = ep_joins[static_cast<size_t>((p.replica_of(l) / p.ep_group) * p.pp + p.rank_of(l))];
      js.resize(std::max(js.size(), p.ops[l].size()));
    }
  }
  res.kind = p.kind;
  res.pp = p.pp;
  res.virtual_stages = p.v;
  res.replicas = p.replicas;
  res.lanes.resize(p.lanes);
  res.chunk_activation_bytes = p.activation_bytes;
  for (const auto& ops : p.ops)
    for (const Op& op : ops) res.split_backward = res.split_backward || op.kind == ActionKind::BackwardWeight;
  if (spans_) {
    size_t n = 0;
    for (const auto& ops : p.ops) n += ops.size();
    res.spans.reserve(n + n / 2);
  }
}

void World::span(int lane, Stream st, ActionKind k, int mb, int chunk, Nanoseconds a, Nanoseconds b, int piece) {
  if (!spans_) return;
  Span sp;
  sp.start_ns = a;
  sp.end_ns = b;
  sp.lane = lane;
  sp.micro_batch = mb;
  sp.chunk = static_cast<int16_t>(chunk);
  sp.kind = k;
  sp.stream = st;
  sp.piece = static_cast<int16_t>(piece);
  res.spans.push_back(sp);
}

Step World::step(int lane, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  const Op& op = p.ops[lane][s.pc];
  switch (op.kind) {
    case ActionKind::Forward:
    case ActionKind::Backward:
    case ActionKind::BackwardWeight: return compute(lane, op, now, wake);
    case ActionKind::SendForward:
    case ActionKind::SendBackward: return send(lane, op, now, wake);
    case ActionKind::RecvForward:
    case ActionKind::RecvBackward: return receive(lane, op, now);
    case ActionKind::ReduceGrads: return reduce(lane, op, now, wake);
    case ActionKind::OptimizerStep: return optimizer(lane, op, now);
  }
  return Step{};
}

// Stash accounting: a forward's activations count from its start until its releasing op ends.
void World::begin_op(LaneState& s, const Op& op, Nanoseconds start) {
  s.op_start_ns = start;
  if (op.kind != ActionKind::Forward) return;
  s.live_bytes += p.activation_bytes[op.model_chunk];
  ++s.live;
  s.stats.peak_activation_bytes = std::max(s.stats.peak_activation_bytes, s.live_bytes);
  s.stats.peak_in_flight = std::max(s.stats.peak_in_flight, s.live);
}

void World::end_op(LaneState& s, const Op& op, Nanoseconds end) {
  s.stats.compute_end_ns = end;
  ++s.stats.actions;
  ++s.pc;
  if (!op.releases) return;
  s.live_bytes -= p.activation_bytes[op.model_chunk];
  --s.live;
  s.grad_start_ns[op.chunk] = s.op_start_ns;
  s.grad_dur_ns[op.chunk] = end - s.op_start_ns;
}

// Extra compute time of an op on [start, start+dur) from its rank's DP traffic in that window.
Nanoseconds World::stretch(int lane, Nanoseconds start, Nanoseconds dur) const {
  if (p.overlap_slowdown <= 0 || dur <= 0) return 0;
  const auto& busy = dp_busy[p.rank_of(lane)];
  const Nanoseconds end = start + dur;
  // Intervals are disjoint and in time order (one FIFO stream): first one ending after start.
  auto it = std::upper_bound(busy.begin(), busy.end(), start,
                             [](Nanoseconds t, const std::pair<Nanoseconds, Nanoseconds>& iv) { return t < iv.second; });
  Nanoseconds overlap = 0;
  for (; it != busy.end() && it->first < end; ++it) overlap += std::min(end, it->second) - std::max(start, it->first);
  return static_cast<Nanoseconds>(p.overlap_slowdown * static_cast<double>(overlap) + 0.5);
}

void World::reduce_bucket(int lane, const Op& op, int bucket, Nanoseconds ready, std::vector<Wake>& wake) {
  const int buckets = p.layers[op.model_chunk];
  issue(lane, ready, share_ns(p.reduce_ns(op), bucket, buckets), ActionKind::ReduceGrads, op.chunk, op.micro_batch, wake);
}

Step World::compute(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake) {
  if (p.joins_experts(op)) {  // MoE: the whole EP group reaches the all-to-all first
    const Step j = expert_join(lane, now, wake);
    if (j.kind != Step::Continue) return j;
  }
  if (op.pieces > 1) return compute_piece(lane, op, now, wake);
  LaneState& s = lanes[lane];
  begin_op(s, op, now);
  // ZeRO-2/3 layer buckets, ready as this op produces each layer's gradients (nothing else can
  // reach this lane's DP stream before the op ends, so issuing them now keeps the stream's order).
  const int buckets = p.layers[op.model_chunk];
  if (p.reduce_ns(op) > 0)
    for (int b = 0; b < buckets; ++b) reduce_bucket(lane, op, b, bucket_ready_ns(now, op.dur_ns, b, buckets), wake);
  const Nanoseconds dur = op.dur_ns + stretch(lane, now, op.dur_ns);
  const Nanoseconds end = now + dur;
  s.stats.compute_ns += dur;
  s.stats.tp_comm_ns += p.tp_ns(op);
  span(lane, Stream::Compute, op.kind, op.micro_batch, op.chunk, now, end);
  end_op(s, op, end);
  return Step{Step::Yield, end};
}

// The layer whose last piece just ended hands its gradient bucket to the DP stream, once per piece
// (BACKWARD_POST and none may reach here twice for the same piece: before and after the gather).
void World::reduce_finished_layer(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  if (p.reduce_ns(op) <= 0 || s.piece == 0 || s.reduced_piece == s.piece) return;
  const int done = p.layers_done(op, s.piece);
  if (done > p.layers_done(op, s.piece - 1)) reduce_bucket(lane, op, done - 1, now, wake);
  s.reduced_piece = s.piece;
}

// ZeRO-3: piece k (one layer, or one of the two passes of a layer re-fetched for recompute) waits
// for its gather, issues the next one (one layer of prefetch; after the last piece, the next
// gathered op's first), then computes. Without prefetch (FSDP1's forward_prefetch=False, or
// BACKWARD_POST / none in B) each piece issues its own gather as it starts; under none the previous
// layer's reduce-scatter is queued before that gather (core/framework_knobs.h BackwardPrefetch).
Step World::compute_piece(int lane, const Op& op, Nanoseconds now, std::vector<Wake>& wake) {
  LaneState& s = lanes[lane];
  const int g = op.model_chunk;
  const bool prefetch = p.prefetches(op);
  if (s.piece_coll < 0) {
    if (s.piece == 0 && s.prefetch_coll >= 0) {
      s.piece_coll = s.prefetch_coll;
      s.prefetch_coll = -1;
    } else {
      if (op.kind != ActionKind::Forward && p.backward_prefetch == BackwardPrefetch::None)
        reduce_finished_layer(lane, op, now, wake);  // queued ahead of this piece's gather
      s.piece_coll = issue(lane, now, p.gather_ns[g], op.kind, op.chunk, op.micro_batch, wake);
    }
  }
  Nanoseconds waited = 0;
  const Step w = wait_for_coll(lane, s.piece_coll, now, waited);
  if (w.kind != Step::Continue) return w;
  s.stats.gather_wait_ns += waited;
  if (s.piece == 0) begin_op(s, op, now);
  reduce_finished_layer(lane, op, now, wake);
  int32_t next = -1;
  if (prefetch && s.piece + 1 < op.pieces) {
    next = issue(lane, now, p.gather_ns[g], op.kind, op.chunk, op.micro_batch, wake);
  } else if (s.piece + 1 == op.pieces && s.prefetch_coll < 0) {
    const int j = next_gathered[lane][s.pc];
    if (j >= 0 && p.prefetches(p.ops[lane][j])) {
      const Op& nx = p.ops[lane][j];
      s.prefetch_coll = issue(lane, now, p.gather_ns[nx.model_chunk], nx.kind, nx.chunk, nx.micro_batch, wake);
    }
  }
  const Nanoseconds base = share_ns(op.dur_ns, s.piece, op.pieces);
  const Nanoseconds dur = base + stretch(lane, now, base);
  const Nanoseconds end = now + dur;
  s.stats.compute_ns += dur;
  s.stats.tp_comm_ns += share_ns(p.tp_ns(op), s.piece, op.pieces);
  span(lane, Stream::Compute, op.kind, op.micro_batch, op.chunk, now, end, s.piece);
  s.piece_coll = next;
  if (++s.piece == op.pieces) {
    if (p.reduce_ns(op) > 0) reduce_bucket(lane, op, p.layers[op.model_chunk] - 1, end, wake);
    s.piece = 0;
    s.reduced_piece = 0;
    end_op(s, op, end);
  }
  return Step{Step::Yield, end};
}

}  // namespace meshplan
