// Pipeline schedule generators (GPipe, 1F1B, Megatron interleaved 1F1B, ZB-H1) and send/recv insertion.
// Pure data: no costs, no time. The simulator and the executor interpret the result.
#include "planner/schedule.h"

#include <algorithm>
#include <cassert>
#include <string>

namespace meshplan {

const char* to_string(ActionKind k) {
  switch (k) {
    case ActionKind::Forward: return "F";
    case ActionKind::Backward: return "B";
    case ActionKind::BackwardWeight: return "W";
    case ActionKind::SendForward: return "SF";
    case ActionKind::RecvForward: return "RF";
    case ActionKind::SendBackward: return "SB";
    case ActionKind::RecvBackward: return "RB";
    case ActionKind::ReduceGrads: return "R";
    case ActionKind::OptimizerStep: return "O";
  }
  return "?";
}

bool is_compute(ActionKind k) {
  return k == ActionKind::Forward || k == ActionKind::Backward || k == ActionKind::BackwardWeight;
}

bool is_p2p(ActionKind k) {
  return k == ActionKind::SendForward || k == ActionKind::RecvForward ||
         k == ActionKind::SendBackward || k == ActionKind::RecvBackward;
}

namespace {

Action compute(ActionKind k, int mb, int chunk) {
  Action a;
  a.kind = k;
  a.micro_batch = mb;
  a.chunk = chunk;
  return a;
}

// GPipe (Huang et al. 2019), in PyTorch pipelining's order: all M forwards, then all M backwards
// in micro-batch order. Every rank holds all M activations at the turn.
std::vector<Action> gpipe_rank(int m) {
  std::vector<Action> out;
  for (int i = 0; i < m; ++i) out.push_back(compute(ActionKind::Forward, i, 0));
  for (int i = 0; i < m; ++i) out.push_back(compute(ActionKind::Backward, i, 0));
  return out;
}

// 1F1B (PipeDream-flush / Megatron non-interleaved): rank r runs min(pp-r-1, M) warm-up forwards,
// then pairs (F i+warmup, B i), then the remaining backwards. At most pp-r activations in flight.
std::vector<Action> one_f_one_b_rank(int pp, int r, int m) {
  const int warmup = std::min(pp - r - 1, m);
  std::vector<Action> out;
  for (int i = 0; i < warmup; ++i) out.push_back(compute(ActionKind::Forward, i, 0));
  for (int i = 0; i < m - warmup; ++i) {
    out.push_back(compute(ActionKind::Forward, i + warmup, 0));
    out.push_back(compute(ActionKind::Backward, i, 0));
  }
  for (int i = m - warmup; i < m; ++i) out.push_back(compute(ActionKind::Backward, i, 0));
  return out;
}

// Megatron-LM forward_backward_pipelining_with_interleaving: virtual micro-batch k (0..v*M-1) of
// rank r runs model chunk (k mod pp*v) / pp (backward: reversed) on micro-batch
// (k / (pp*v)) * pp + k mod pp. Warm-up: 2(pp-r-1) + (v-1)pp forwards (capped at v*M), then
// (F k+warmup, B k) pairs, then the remaining backwards.
int interleaved_chunk(int k, int pp, int v, bool forward) {
  const int c = (k % (pp * v)) / pp;
  return forward ? c : v - 1 - c;
}
int interleaved_micro_batch(int k, int pp, int v) { return (k / (pp * v)) * pp + k % pp; }

std::vector<Action> interleaved_rank(int pp, int v, int r, int m) {
  const int total = v * m;
  const int warmup = std::min(2 * (pp - r - 1) + (v - 1) * pp, total);
  std::vector<Action> out;
  auto fwd = [&](int k) {
    out.push_back(compute(ActionKind::Forward, interleaved_micro_batch(k, pp, v),
                          interleaved_chunk(k, pp, v, true)));
  };
  auto bwd = [&](int k) {
    out.push_back(compute(ActionKind::Backward, interleaved_micro_batch(k, pp, v),
                          interleaved_chunk(k, pp, v, false)));
  };
  for (int k = 0; k < warmup; ++k) fwd(k);
  for (int k = 0; k < total - warmup; ++k) {
    fwd(k + warmup);
    bwd(k);
  }
  for (int k = total - warmup; k < total; ++k) bwd(k);
  return out;
}

// ZB-H1 (Qi et al. 2023, "Zero Bubble Pipeline Parallelism", handcrafted H1): backward split into
// B (input gradient, on the critical path) and W (weight gradient). Rank r runs, for
// x = 0 .. M+pp-2, the triple (F x, B x-(pp-1-r), W x-(pp-1)), skipping indices outside [0, M).
// The B chain therefore travels one B-time per stage, and each rank's first W passes are
// deferred into what was 1F1B's cool-down bubble. Stage 0 holds pp activations, as in 1F1B.
std::vector<Action> zb_h1_rank(int pp, int r, int m) {
  std::vector<Action> out;
  for (int x = 0; x < m + pp - 1; ++x) {
    const int b = x - (pp - 1 - r);
    const int w = x - (pp - 1);
    if (x < m) out.push_back(compute(ActionKind::Forward, x, 0));
    if (b >= 0 && b < m) out.push_back(compute(ActionKind::Backward, b, 0));
    if (w >= 0 && w < m) out.push_back(compute(ActionKind::BackwardWeight, w, 0));
  }
  return out;
}

// Appends R (one per chunk, right after that chunk's last backward piece) and O at the end.
void add_reduce_and_step(std::vector<Action>& acts, int v) {
  std::vector<int> last(v, -1);
  for (int i = 0; i < static_cast<int>(acts.size()); ++i)
    if (acts[i].kind == ActionKind::Backward || acts[i].kind == ActionKind::BackwardWeight)
      last[acts[i].chunk] = i;
  std::vector<Action> out;
  out.reserve(acts.size() + v + 1);
  for (int i = 0; i < static_cast<int>(acts.size()); ++i) {
    out.push_back(acts[i]);
    for (int c = 0; c < v; ++c)
      if (last[c] == i) {
        Action red;
        red.kind = ActionKind::ReduceGrads;
        red.chunk = c;
        out.push_back(red);
      }
  }
  Action opt;
  opt.kind = ActionKind::OptimizerStep;
  out.push_back(opt);
  acts = std::move(out);
}

Error schedule_error(const std::string& field, int value, const std::string& message,
                     const std::string& hint) {
  return make_error("schedule", field, std::to_string(value), message, hint);
}

}  // namespace

Result<Schedule> make_schedule(ScheduleKind kind, int pp, int virtual_stages, int num_micro_batches) {
  if (pp < 1) return schedule_error("--pp", pp, "needs at least one pipeline rank", "use --pp 1 or more");
  if (num_micro_batches < 1)
    return schedule_error("num_micro_batches", num_micro_batches, "needs at least one micro-batch",
                          "raise the global batch or lower --micro-batch");
  if (virtual_stages < 1)
    return schedule_error("--virtual-stages", virtual_stages, "must be >= 1", "e.g. --virtual-stages 2");
  if (kind != ScheduleKind::Interleaved && virtual_stages != 1)
    return schedule_error("--virtual-stages", virtual_stages, "only the interleaved schedule uses it",
                          "use --schedule interleaved or --virtual-stages 1");
  if (kind == ScheduleKind::Interleaved && num_micro_batches % pp != 0)
    return schedule_error("num_micro_batches", num_micro_batches,
                          "interleaved 1F1B needs a multiple of pp=" + std::to_string(pp),
                          "change the micro-batch size or the global batch");
  Schedule s;
  s.kind = kind;
  s.pp = pp;
  s.virtual_stages = virtual_stages;
  s.num_micro_batches = num_micro_batches;
  s.ranks.resize(pp);
  for (int r = 0; r < pp; ++r) {
    auto& acts = s.ranks[r];
    switch (kind) {
      case ScheduleKind::GPipe: acts = gpipe_rank(num_micro_batches); break;
      case ScheduleKind::OneFOneB: acts = one_f_one_b_rank(pp, r, num_micro_batches); break;
      case ScheduleKind::Interleaved:
        acts = interleaved_rank(pp, virtual_stages, r, num_micro_batches);
        break;
      case ScheduleKind::ZeroBubbleH1: acts = zb_h1_rank(pp, r, num_micro_batches); break;
    }
    add_reduce_and_step(acts, virtual_stages);
  }
  return s;
}

int model_chunk(const Schedule& s, int rank, int chunk) { return chunk * s.pp + rank; }

Schedule add_communication(const Schedule& s) {
  Schedule out = s;
  const int pp = s.pp;
  const int last_chunk = pp * s.virtual_stages - 1;
  for (int r = 0; r < pp; ++r) {
    std::vector<Action> acts;
    acts.reserve(s.ranks[r].size() * 3);
    const int next = (r + 1) % pp;
    const int prev = (r + pp - 1) % pp;
    for (const Action& a : s.ranks[r]) {
      const int g = model_chunk(s, r, a.chunk);
      // Neighbouring model chunks live on other ranks whenever pp > 1 (chunk g on rank g mod pp).
      const bool has_prev = pp > 1 && g > 0;
      const bool has_next = pp > 1 && g < last_chunk;
      auto comm = [&](ActionKind k, int peer) {
        Action c = a;
        c.kind = k;
        c.peer = peer;
        acts.push_back(c);
      };
      if (a.kind == ActionKind::Forward && has_prev) comm(ActionKind::RecvForward, prev);
      if (a.kind == ActionKind::Backward && has_next) comm(ActionKind::RecvBackward, next);
      acts.push_back(a);
      if (a.kind == ActionKind::Forward && has_next) comm(ActionKind::SendForward, next);
      if (a.kind == ActionKind::Backward && has_prev) comm(ActionKind::SendBackward, prev);
    }
    out.ranks[r] = std::move(acts);
  }
  return out;
}

Result<Schedule> build_schedule(ScheduleKind kind, int pp, int virtual_stages, int num_micro_batches) {
  auto s = make_schedule(kind, pp, virtual_stages, num_micro_batches);
  if (!s) return s.error();
  return add_communication(*s);
}

bool has_weight_actions(const Schedule& s) {
  for (const auto& acts : s.ranks)
    for (const Action& a : acts)
      if (a.kind == ActionKind::BackwardWeight) return true;
  return false;
}

std::vector<int> max_in_flight(const Schedule& s) {
  // A forward's activations stay until its last backward piece: W when the schedule splits the
  // backward (ZB-H1 keeps the layer inputs for dW), B otherwise.
  const ActionKind release = has_weight_actions(s) ? ActionKind::BackwardWeight : ActionKind::Backward;
  std::vector<int> peak(s.ranks.size(), 0);
  for (size_t r = 0; r < s.ranks.size(); ++r) {
    int live = 0;
    for (const Action& a : s.ranks[r]) {
      if (a.kind == ActionKind::Forward) peak[r] = std::max(peak[r], ++live);
      if (a.kind == release) --live;
    }
  }
  return peak;
}

}  // namespace meshplan
