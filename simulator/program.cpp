// compile_program: schedule actions + chunk durations + slowdowns -> flat per-lane op arrays.
#include "simulator/program.h"

#include <cassert>
#include <cmath>

namespace meshplan {

const char* to_string(Stream s) {
  switch (s) {
    case Stream::Compute: return "compute";
    case Stream::P2p: return "p2p";
    case Stream::Dp: return "dp";
  }
  return "?";
}

namespace {

Nanoseconds scaled(Nanoseconds ns, double factor) {
  return factor == 1.0 ? ns : static_cast<Nanoseconds>(std::llround(static_cast<double>(ns) * factor));
}

double factor_at(const std::vector<double>& f, int i) { return f.empty() ? 1.0 : f[i]; }

// Writes straight into the program's (default-initialised) op: building an Op on the stack field by
// field and copying it out reloaded it as wide words before the narrow stores had landed, a stalled
// store-to-load forward that took most of the compile time.
void compile_op(const SimInput& in, const Program& p, int rep, int r, const Action& a, bool split, Op& op) {
  const int lane = rep * p.pp + r;
  const int g = model_chunk(in.schedule, r, a.chunk);
  const ChunkTimes& ct = in.chunks[g];
  const double slow = factor_at(in.compute_factor, lane);
  op.kind = a.kind;
  op.micro_batch = a.micro_batch;
  op.chunk = static_cast<int16_t>(a.chunk);
  op.model_chunk = static_cast<int16_t>(g);
  // The neighbouring model chunk's rank, which add_communication / the schedule text put in peer.
  const int next = a.peer >= 0 ? a.peer : (r + 1) % p.pp, prev = a.peer >= 0 ? a.peer : (r + p.pp - 1) % p.pp;
  switch (a.kind) {
    case ActionKind::Forward:
      op.dur_ns = scaled(ct.forward_ns, slow);
      op.pieces = static_cast<int16_t>(ct.gather_ns > 0 && (!ct.gather_once || a.micro_batch == 0) ? ct.layers : 1);
      break;
    case ActionKind::Backward:
      op.dur_ns = scaled(ct.backward_ns, slow);
      op.pieces = static_cast<int16_t>(ct.gather_ns > 0 && !ct.gather_once ? ct.layers + ct.refetch_layers : 1);
      op.releases = !split;
      break;
    case ActionKind::BackwardWeight:
      op.dur_ns = scaled(ct.weight_ns, slow);
      op.releases = true;
      break;
    case ActionKind::SendForward:
      op.slot = mailbox_slot(p, rep, true, g + 1, a.micro_batch);
      op.peer_lane = rep * p.pp + next;
      op.dur_ns = scaled(in.p2p_ns, factor_at(in.link_factor, rep * p.pp + r));
      break;
    case ActionKind::SendBackward:
      op.slot = mailbox_slot(p, rep, false, g - 1, a.micro_batch);
      op.peer_lane = rep * p.pp + prev;
      op.dur_ns = scaled(in.p2p_ns, factor_at(in.link_factor, rep * p.pp + prev));
      break;
    case ActionKind::RecvForward: op.slot = mailbox_slot(p, rep, true, g, a.micro_batch); break;
    case ActionKind::RecvBackward: op.slot = mailbox_slot(p, rep, false, g, a.micro_batch); break;
    case ActionKind::ReduceGrads: op.dur_ns = ct.dp_reduce_ns; break;
    case ActionKind::OptimizerStep: op.dur_ns = scaled(in.optimizer_ns, slow); break;
  }
}

}  // namespace

Program compile_program(const SimInput& in) {
  const Schedule& s = in.schedule;
  assert(static_cast<int>(in.chunks.size()) == s.pp * s.virtual_stages && "one ChunkTimes per model chunk");
  assert(in.replicas >= 1);
  Program p;
  p.kind = s.kind;
  p.pp = s.pp;
  p.v = s.virtual_stages;
  p.m = s.num_micro_batches;
  p.replicas = in.replicas;
  p.lanes = in.replicas * s.pp;
  p.slots = in.replicas * 2 * s.pp * s.virtual_stages * s.num_micro_batches;
  const bool split = has_weight_actions(s);
  p.ops.resize(p.lanes);
  for (int rep = 0; rep < p.replicas; ++rep)
    for (int r = 0; r < p.pp; ++r) {
      auto& ops = p.ops[rep * p.pp + r];
      const auto& acts = s.ranks[r];
      ops.resize(acts.size());
      for (size_t i = 0; i < acts.size(); ++i) compile_op(in, p, rep, r, acts[i], split, ops[i]);
    }
  for (const ChunkTimes& ct : in.chunks) {
    p.gather_ns.push_back(ct.gather_ns);
    p.layers.push_back(ct.layers < 1 ? 1 : ct.layers);
    p.refetch_layers.push_back(ct.refetch_layers);
    p.reduce_after_backward.push_back(ct.gather_once ? 1 : 0);
    p.activation_bytes.push_back(ct.activation_bytes);
    p.tp_forward_ns.push_back(ct.tp_forward_ns);
    p.tp_backward_ns.push_back(ct.tp_backward_ns);
    p.reduce_mb_ns.push_back(ct.reduce_per_micro_batch_ns);
  }
  p.overlap_slowdown = in.overlap_slowdown;
  p.forward_prefetch = in.forward_prefetch;
  p.backward_prefetch = in.backward_prefetch;
  p.ep_group = in.ep_group_replicas > 1 && in.replicas % in.ep_group_replicas == 0 ? in.ep_group_replicas : 1;
  for (const ChunkTimes& ct : in.chunks) {
    p.ep_joins.push_back(ct.ep_forward_ns > 0 ? 1 : 0);
    p.ep_joins.push_back(ct.ep_backward_ns > 0 ? 1 : 0);
  }
  p.after_gather_ns.assign(p.pp, 0);
  for (int r = 0; r < p.pp && r < static_cast<int>(in.after_gather_ns.size()); ++r)
    p.after_gather_ns[r] = in.after_gather_ns[r];
  return p;
}

}  // namespace meshplan
