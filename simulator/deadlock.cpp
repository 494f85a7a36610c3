// deadlock_error: names the cycle of blocked ranks and their actions (see deadlock.h).
#include "simulator/deadlock.h"

#include <cassert>
#include <vector>

#include "core/pipeline_placement.h"

namespace meshplan {

namespace {

std::string lane_name(const Program& p, int lane) {
  const std::string r = "rank " + std::to_string(p.rank_of(lane));
  return p.replicas > 1 ? "replica " + std::to_string(p.replica_of(lane)) + " " + r : r;
}

std::string op_label(const Op& op, int mb, int chunk) {
  std::string t = to_string(op.kind);
  if (op.kind != ActionKind::ReduceGrads && op.kind != ActionKind::OptimizerStep) t += std::to_string(mb);
  return op.kind == ActionKind::OptimizerStep ? t : t + "." + std::to_string(chunk);
}

// One blocked lane: what it is stuck at and whom it waits for.
struct Blocked {
  std::string at;        // "RB0.0"
  std::string needs;     // "SB0.0 from rank 1"
  int waits_for = -1;    // lane
};

Blocked describe(const Program& p, const World& w, int lane) {
  const LaneState& s = w.lanes[lane];
  const auto& ops = p.ops[lane];
  Blocked b;
  const int rank = p.rank_of(lane), rep = p.replica_of(lane);
  if (s.blocked_slot >= 0) {
    const Op& op = ops[s.pc];
    const bool fwd = op.kind == ActionKind::RecvForward;
    const int g = op.model_chunk + (fwd ? -1 : 1);  // the producing model chunk
    const int src = chunk_rank(p.kind, p.pp, g);
    b.waits_for = rep * p.pp + src;
    b.at = op_label(op, op.micro_batch, op.chunk);
    b.needs = std::string(fwd ? "SF" : "SB") + std::to_string(op.micro_batch) + "." + std::to_string(chunk_local_index(p.kind, p.pp, g)) +
              " from " + lane_name(p, b.waits_for);
    return b;
  }
  if (s.blocked_join >= 0) {  // MoE: an EP-group member never reached this all-to-all
    const Op& op = ops[s.pc];
    b.at = op_label(op, op.micro_batch, op.chunk);
    const int first = (rep / p.ep_group) * p.ep_group;
    for (int q = first; q < first + p.ep_group; ++q) {
      const LaneState& o = w.lanes[q * p.pp + rank];
      if (q != rep && o.joined_pc != s.pc) {
        b.waits_for = q * p.pp + rank;
        break;
      }
    }
    b.needs = "the expert all-to-all of its EP group, not reached by " +
              (b.waits_for >= 0 ? lane_name(p, b.waits_for) : std::string("?"));
    return b;
  }
  assert(s.blocked_coll >= 0 && "a stuck lane is blocked on a message or a collective");
  b.at = s.pc < static_cast<int>(ops.size()) ? op_label(ops[s.pc], ops[s.pc].micro_batch, ops[s.pc].chunk)
                                             : std::string("end of step");
  for (int q = 0; q < p.replicas; ++q) {
    const int other = q * p.pp + rank;
    if (w.lanes[other].coll_next <= s.blocked_coll) {
      b.waits_for = other;
      break;
    }
  }
  b.needs = "DP collective #" + std::to_string(s.blocked_coll) + " joined by " +
            (b.waits_for >= 0 ? lane_name(p, b.waits_for) : std::string("?"));
  return b;
}

}  // namespace

Error deadlock_error(const Program& p, const World& w, const std::string& file) {
  int start = 0;
  while (start < p.lanes && w.lanes[start].done) ++start;
  assert(start < p.lanes);
  std::vector<int> seen(p.lanes, -1);
  std::vector<int> chain;
  int l = start;
  while (l >= 0 && !w.lanes[l].done && seen[l] < 0) {
    seen[l] = static_cast<int>(chain.size());
    chain.push_back(l);
    l = describe(p, w, l).waits_for;
  }
  const bool cycle = l >= 0 && !w.lanes[l].done;
  const size_t from = cycle ? static_cast<size_t>(seen[l]) : 0;
  std::string path, detail;
  for (size_t i = from; i < chain.size(); ++i) {
    const Blocked b = describe(p, w, chain[i]);
    path += lane_name(p, chain[i]) + " " + b.at + " -> ";
    detail += (i > from ? "; " : "") + lane_name(p, chain[i]) + " blocks at " + b.at + " waiting for " + b.needs;
  }
  if (cycle) {
    path += lane_name(p, l);
    return make_error(file, "deadlock", path, "ranks wait for each other in a cycle: " + detail,
                      "reorder actions so every receive's matching send can run first");
  }
  path += l >= 0 ? lane_name(p, l) + " (finished)" : "?";
  return make_error(file, "deadlock", path, "a receive waits for a send that never comes: " + detail,
                    "the sender finished its list without sending; add the send");
}

}  // namespace meshplan
