// Pipeline schedule generators (GPipe, 1F1B, Megatron interleaved 1F1B, ZB-H1, DualPipeV) and send/recv insertion.
// Pure data: no costs, no time. The simulator and the executor interpret the result.
#include "planner/schedule.h"

#include <algorithm>
#include <cassert>
#include <deque>
#include <string>
#include <utility>

#include "core/pipeline_placement.h"

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

// DualPipeV as torch.distributed.pipelining's ScheduleDualPipeV orders it (_calculate_single_rank_operations,
// "based on the open sourced code from github.com/deepseek-ai/DualPipe", dualpipev.py DualPipeV.step):
// local chunk 0 is model chunk r, chunk 1 is 2pp-1-r. Per-chunk counters hand out micro-batches; a full
// backward is B then W here (B alone when the step runs it as zero bubble, its W queued and issued by a
// later "weight" slot, oldest first); an overlapped F&B pair runs F, then the full backward. Eight steps:
// F0 x 2(pp-r-1); (F0 F1) x (r+1); (B1 W F1) x (pp-r-1); (F0 B1 | F1 B0) x (M-2pp+r+1), the last rank's
// first F0 B1 not overlapped; (B1 | F1 B0) x (pp-r-1); (B1 B0) x (r+1), zero bubble from its middle on;
// (W B0) x (pp-r-1); W x (r+1).
class DualPipeVRank {
 public:
  DualPipeVRank(int pp, int r, int m) : pp_(pp), r_(r), m_(m) {}
  std::vector<Action> build() {
    const int pp = pp_, r = r_;
    for (int i = 0; i < 2 * (pp - r - 1); ++i) forward(0);
    for (int i = 0; i < r + 1; ++i) { forward(0); forward(1); }
    for (int i = 0; i < pp - r - 1; ++i) { input_grad(1); weight(); forward(1); }
    for (int i = 0; i < m_ - 2 * pp + r + 1; ++i) {
      forward(0);  // the last rank's first pair is not overlapped: the same order here
      full_backward(1);
      forward(1);
      full_backward(0);
    }
    for (int i = 0; i < pp - r - 1; ++i) { full_backward(1); forward(1); full_backward(0); }
    bool zero_bubble = false;
    for (int i = 0; i < r + 1; ++i) {
      if (i == (r + 1) / 2 && r % 2 == 1) zero_bubble = true;
      backward(1, zero_bubble);
      if (i == (r + 1) / 2 && r % 2 == 0) zero_bubble = true;
      backward(0, zero_bubble);
    }
    for (int i = 0; i < pp - r - 1; ++i) { weight(); backward(0, zero_bubble); }
    for (int i = 0; i < r + 1; ++i) weight();
    return std::move(out_);
  }

 private:
  void push(ActionKind k, int mb, int chunk) {
    if (mb < m_) out_.push_back(compute(k, mb, chunk));  // the counters may run past M (PyTorch drops those)
  }
  void forward(int c) { push(ActionKind::Forward, next_f_[c]++, c); }
  void input_grad(int c) {
    push(ActionKind::Backward, next_b_[c], c);
    pending_w_.emplace_back(c, next_b_[c]++);
  }
  void full_backward(int c) {
    push(ActionKind::Backward, next_b_[c], c);
    push(ActionKind::BackwardWeight, next_b_[c]++, c);
  }
  void backward(int c, bool zero_bubble) { zero_bubble ? input_grad(c) : full_backward(c); }
  void weight() {
    if (pending_w_.empty()) return;
    const auto [c, mb] = pending_w_.front();
    pending_w_.pop_front();
    push(ActionKind::BackwardWeight, mb, c);
  }
  int pp_, r_, m_;
  int next_f_[2] = {0, 0}, next_b_[2] = {0, 0};
  std::deque<std::pair<int, int>> pending_w_;
  std::vector<Action> out_;
};

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
  if (kind == ScheduleKind::DualPipeV) {
    if (virtual_stages != 2)
      return schedule_error("--virtual-stages", virtual_stages, "dualpipev holds exactly two model chunks per rank",
                            "use --virtual-stages 2 with --schedule dualpipev");
    if (pp < 2) return schedule_error("--pp", pp, "dualpipev needs pp >= 2", "raise --pp or use 1f1b");
    if (num_micro_batches < 2 * pp)
      return schedule_error("num_micro_batches", num_micro_batches,
                            "dualpipev needs at least 2pp=" + std::to_string(2 * pp) + " micro-batches",
                            "lower the micro-batch size or raise the global batch");
  } else if (kind != ScheduleKind::Interleaved && virtual_stages != 1) {
    return schedule_error("--virtual-stages", virtual_stages, "only the interleaved schedule uses it",
                          "use --schedule interleaved or --virtual-stages 1");
  }
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
      case ScheduleKind::DualPipeV: acts = DualPipeVRank(pp, r, num_micro_batches).build(); break;
    }
    add_reduce_and_step(acts, virtual_stages);
  }
  return s;
}

Schedule add_communication(const Schedule& s) {
  Schedule out = s;
  const int pp = s.pp;
  const int last_chunk = pp * s.virtual_stages - 1;
  for (int r = 0; r < pp; ++r) {
    std::vector<Action> acts;
    acts.reserve(s.ranks[r].size() * 3);
    for (const Action& a : s.ranks[r]) {
      const int g = model_chunk(s, r, a.chunk);
      // The neighbouring model chunks' ranks (looped: g mod pp; V-shaped: the turn at pp-1 | pp stays on
      // the last rank, whose two chunks hand over in memory, without a transfer).
      const int next = g < last_chunk ? chunk_rank(s.kind, pp, g + 1) : -1;
      const int prev = g > 0 ? chunk_rank(s.kind, pp, g - 1) : -1;
      const bool has_prev = pp > 1 && g > 0 && prev != r;
      const bool has_next = pp > 1 && g < last_chunk && next != r;
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
