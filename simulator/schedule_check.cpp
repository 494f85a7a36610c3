// Static schedule checks (see schedule_check.h): counts, per-rank order, send/recv pairing, R and O.
#include "simulator/schedule_check.h"

#include <string>
#include <vector>

#include "core/pipeline_placement.h"

namespace meshplan {

std::string action_label(const Action& a) {
  std::string t = to_string(a.kind);
  if (a.kind == ActionKind::OptimizerStep) return t;
  if (a.kind != ActionKind::ReduceGrads) t += std::to_string(a.micro_batch);
  return t + "." + std::to_string(a.chunk);
}

bool lacks_communication(const Schedule& s) {
  for (const auto& acts : s.ranks)
    for (const Action& a : acts)
      if (is_p2p(a.kind)) return false;
  return true;
}

namespace {

constexpr int kKinds = 9;

// Position of each (kind, chunk, micro-batch) on one rank; -1 = absent, -2 = more than once.
struct RankIndex {
  int v = 1, m = 1;
  std::vector<int> pos;  // [chunk][mb][kind]: the checks of one (chunk, mb) read one cache line
  int& at(ActionKind k, int chunk, int mb) {
    return pos[(static_cast<size_t>(chunk) * m + mb) * kKinds + static_cast<int>(k)];
  }
};

struct Checker {
  const Schedule& s;
  std::string file;
  bool split = false;  // the schedule has W actions (computed once: it scans every rank)
  std::vector<RankIndex> idx;

  Error fail(int rank, const std::string& what, const std::string& message, const std::string& hint) const {
    return make_error(file, "rank " + std::to_string(rank), what, message, hint);
  }
  static Action act(ActionKind k, int mb, int chunk) {
    Action a;
    a.kind = k;
    a.micro_batch = mb;
    a.chunk = chunk;
    return a;
  }
  std::string label(ActionKind k, int mb, int chunk) const { return action_label(act(k, mb, chunk)); }

  Result<bool> index_ranks();
  Result<bool> check_counts_and_order(int r);
  Result<bool> check_receive(int r, ActionKind recv, int mb, int c);
  Result<bool> check_send(int r, ActionKind send, int mb, int c);
  Result<bool> check_comm(int r);
  Result<bool> check_reduce_and_step(int r);
};

Result<bool> Checker::index_ranks() {
  idx.resize(s.pp);
  for (int r = 0; r < s.pp; ++r) {
    RankIndex& ri = idx[r];
    ri.v = s.virtual_stages;
    ri.m = s.num_micro_batches;
    ri.pos.assign(static_cast<size_t>(kKinds) * ri.v * ri.m, -1);
    const auto& acts = s.ranks[r];
    for (int i = 0; i < static_cast<int>(acts.size()); ++i) {
      const Action& a = acts[i];
      if (a.chunk < 0 || a.chunk >= s.virtual_stages)
        return fail(r, action_label(a), "chunk out of range (virtual_stages=" + std::to_string(s.virtual_stages) + ")",
                    "chunks are numbered 0.." + std::to_string(s.virtual_stages - 1));
      if (a.kind == ActionKind::ReduceGrads || a.kind == ActionKind::OptimizerStep) continue;
      if (a.micro_batch < 0 || a.micro_batch >= s.num_micro_batches)
        return fail(r, action_label(a), "micro-batch out of range (M=" + std::to_string(s.num_micro_batches) + ")",
                    "micro-batches are numbered 0.." + std::to_string(s.num_micro_batches - 1));
      if (is_p2p(a.kind) && s.pp == 1)
        return fail(r, action_label(a), "a single pipeline rank has nobody to send to", "drop send/recv actions");
      int& p = ri.at(a.kind, a.chunk, a.micro_batch);
      if (p != -1)
        return fail(r, action_label(a), "appears more than once",
                    "each micro-batch runs each action exactly once per chunk");
      p = i;
    }
  }
  return true;
}

Result<bool> Checker::check_counts_and_order(int r) {
  RankIndex& ri = idx[r];
  for (int c = 0; c < s.virtual_stages; ++c)
    for (int mb = 0; mb < s.num_micro_batches; ++mb) {
      const int f = ri.at(ActionKind::Forward, c, mb);
      const int b = ri.at(ActionKind::Backward, c, mb);
      const int w = ri.at(ActionKind::BackwardWeight, c, mb);
      // Messages are built only on failure: this loop visits every (chunk, micro-batch) of every rank.
      const char* once = "every micro-batch needs its F and B exactly once per chunk";
      if (f < 0) return fail(r, label(ActionKind::Forward, mb, c), "missing", once);
      if (b < 0) return fail(r, label(ActionKind::Backward, mb, c), "missing", once);
      if (split && w < 0)
        return fail(r, label(ActionKind::BackwardWeight, mb, c), "missing (the schedule splits B and W)",
                    "add the W action after its B");
      if (b < f)
        return fail(r, label(ActionKind::Backward, mb, c) + " before " + label(ActionKind::Forward, mb, c),
                    "backward runs before its forward", "move the B after its F");
      if (split && w < b)
        return fail(r, label(ActionKind::BackwardWeight, mb, c) + " before " + label(ActionKind::Backward, mb, c),
                    "weight gradient runs before its input gradient", "move the W after its B");
    }
  return true;
}

// The neighbour that produces what `recv` on (rank r, chunk c) waits for, and its send kind.
struct Peer {
  int rank = -1, chunk = -1;
};
Peer producer(const Schedule& s, int r, int c, bool forward) {
  const int g = model_chunk(s, r, c) + (forward ? -1 : 1);
  return Peer{chunk_rank(s.kind, s.pp, g), chunk_local_index(s.kind, s.pp, g)};
}

Result<bool> Checker::check_receive(int r, ActionKind recv, int mb, int c) {
  const bool fwd = recv == ActionKind::RecvForward;
  const ActionKind compute = fwd ? ActionKind::Forward : ActionKind::Backward;
  const ActionKind send = fwd ? ActionKind::SendForward : ActionKind::SendBackward;
  const int g = model_chunk(s, r, c);
  const int last = s.pp * s.virtual_stages - 1;
  const bool end = fwd ? g == 0 : g == last;
  const int rp = idx[r].at(recv, c, mb);
  // A V-shaped schedule's turn (model chunks pp-1 and pp, both on rank pp-1) hands over in memory: the
  // producing chunk's compute must come first on the same rank.
  if (!end && s.pp > 1 && producer(s, r, c, fwd).rank == r) {
    const Peer p = producer(s, r, c, fwd);
    if (rp >= 0)
      return fail(r, label(recv, mb, c), "receives from its own rank (the V's turn hands over in memory)",
                  "remove it");
    if (idx[r].at(compute, p.chunk, mb) > idx[r].at(compute, c, mb))
      return fail(r, label(compute, mb, c) + " before " + label(compute, mb, p.chunk),
                  fwd ? "uses the other chunk's output before computing it"
                      : "uses the other chunk's input gradient before computing it",
                  "move it after " + label(compute, mb, p.chunk));
    return true;
  }
  const bool needed = s.pp > 1 && !end;
  if (!needed) {
    if (rp >= 0)
      return fail(r, label(recv, mb, c), "receives from nobody (model chunk " + std::to_string(g) + " is an end)",
                  "remove it");
    return true;
  }
  if (rp < 0)
    return fail(r, label(compute, mb, c), "has no " + label(recv, mb, c) + " before it",
                "insert the receive before the compute action");
  if (rp > idx[r].at(compute, c, mb))
    return fail(r, label(recv, mb, c) + " after " + label(compute, mb, c), "data is received after it is used",
                "move the receive before the compute action");
  const Peer p = producer(s, r, c, fwd);
  if (idx[p.rank].at(send, p.chunk, mb) < 0)
    return fail(r, label(recv, mb, c),
                "receive without send: no matching " + label(send, mb, p.chunk) + " on rank " +
                    std::to_string(p.rank),
                "add " + label(send, mb, p.chunk) + " to rank " + std::to_string(p.rank) + " after " +
                    label(fwd ? ActionKind::Forward : ActionKind::Backward, mb, p.chunk));
  return true;
}

Result<bool> Checker::check_send(int r, ActionKind send, int mb, int c) {
  const bool fwd = send == ActionKind::SendForward;
  const ActionKind compute = fwd ? ActionKind::Forward : ActionKind::Backward;
  const int sp = idx[r].at(send, c, mb);
  if (sp < 0) return true;  // a missing send is reported from its receiver's side
  const int g = model_chunk(s, r, c);
  const int last = s.pp * s.virtual_stages - 1;
  if (fwd ? g == last : g == 0)
    return fail(r, label(send, mb, c), "sends past the end of the pipeline", "remove it");
  if (sp < idx[r].at(compute, c, mb))
    return fail(r, label(send, mb, c) + " before " + label(compute, mb, c), "sends data before computing it",
                "move the send after the compute action");
  const Peer p = producer(s, r, c, !fwd);  // the consumer
  if (p.rank == r)
    return fail(r, label(send, mb, c), "sends to its own rank (the V's turn hands over in memory)", "remove it");
  const ActionKind recv = fwd ? ActionKind::RecvForward : ActionKind::RecvBackward;
  if (idx[p.rank].at(recv, p.chunk, mb) < 0)
    return fail(r, label(send, mb, c),
                "send without receive: rank " + std::to_string(p.rank) + " has no " + label(recv, mb, p.chunk),
                "add the receive on rank " + std::to_string(p.rank));
  return true;
}

Result<bool> Checker::check_comm(int r) {
  for (int c = 0; c < s.virtual_stages; ++c)
    for (int mb = 0; mb < s.num_micro_batches; ++mb) {
      for (ActionKind k : {ActionKind::RecvForward, ActionKind::RecvBackward}) {
        auto ok = check_receive(r, k, mb, c);
        if (!ok) return ok;
      }
      for (ActionKind k : {ActionKind::SendForward, ActionKind::SendBackward}) {
        auto ok = check_send(r, k, mb, c);
        if (!ok) return ok;
      }
    }
  return true;
}

Result<bool> Checker::check_reduce_and_step(int r) {
  const auto& acts = s.ranks[r];
  const ActionKind release = split ? ActionKind::BackwardWeight : ActionKind::Backward;
  std::vector<int> reduce(s.virtual_stages, -1), last_bwd(s.virtual_stages, -1);
  int opt = -1;
  for (int i = 0; i < static_cast<int>(acts.size()); ++i) {
    const Action& a = acts[i];
    if (a.kind == release) last_bwd[a.chunk] = i;
    if (a.kind == ActionKind::ReduceGrads) {
      if (reduce[a.chunk] >= 0)
        return fail(r, action_label(a), "appears more than once", "one R per chunk and step");
      reduce[a.chunk] = i;
    }
    if (a.kind == ActionKind::OptimizerStep) {
      if (opt >= 0) return fail(r, "O", "appears more than once", "one optimizer step per step");
      opt = i;
    }
  }
  if (opt != static_cast<int>(acts.size()) - 1)
    return fail(r, "O", opt < 0 ? "missing" : "is not the last action", "end every rank's list with O");
  for (int c = 0; c < s.virtual_stages; ++c) {
    const std::string rc = "R." + std::to_string(c);
    if (reduce[c] < 0) return fail(r, rc, "missing", "add " + rc + " after the chunk's last backward");
    if (reduce[c] < last_bwd[c])
      return fail(r, rc, "reduces gradients before the chunk's last backward", "move it after the last backward");
  }
  return true;
}

}  // namespace

Result<bool> check_schedule(const Schedule& s, const std::string& file) {
  if (s.pp < 1 || s.virtual_stages < 1 || s.num_micro_batches < 1 || static_cast<int>(s.ranks.size()) != s.pp)
    return make_error(file, "pp", std::to_string(s.pp), "schedule shape is inconsistent",
                      "one action list per pipeline rank, v >= 1, M >= 1");
  Checker ch{s, file, has_weight_actions(s), {}};
  auto ok = ch.index_ranks();
  for (int r = 0; ok && r < s.pp; ++r) ok = ch.check_counts_and_order(r);
  for (int r = 0; ok && r < s.pp; ++r) ok = ch.check_comm(r);
  for (int r = 0; ok && r < s.pp; ++r) ok = ch.check_reduce_and_step(r);
  return ok;
}

}  // namespace meshplan
