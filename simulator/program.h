// Program: a SimInput compiled into flat per-lane op arrays with durations and mailbox slots
// resolved, shared by the event engine and its plain reference twin.
#pragma once
#include <cstdint>
#include <vector>

#include "simulator/sim_types.h"

namespace meshplan {

struct Op {  // 32 bytes: the event loop streams through these
  Nanoseconds dur_ns = 0;     // F/B/W: compute (slowdown applied); SF/SB: transfer; R: whole
                              // reduction; O: optimizer
  int32_t slot = -1;          // RF/RB: mailbox slot read; SF/SB: slot written
  int32_t peer_lane = -1;     // SF/SB: the receiving lane
  int32_t micro_batch = -1;
  ActionKind kind = ActionKind::Forward;
  int16_t chunk = 0;          // local chunk
  int16_t model_chunk = 0;
  int16_t pieces = 1;         // ZeRO-3: one piece per gather, each after its gather: a layer's, and in
                              // B a second one before each re-fetching layer (Program::layers_done)
  bool releases = false;      // last backward piece of its micro-batch: frees the stash, and its
                              // gradients feed this chunk's R (and, ZeRO-2/3, its reduce-scatter)
};

struct Program {
  ScheduleKind kind = ScheduleKind::OneFOneB;  // with pp: where each model chunk lives (core/pipeline_placement.h)
  int pp = 1;
  int v = 1;
  int m = 1;
  int replicas = 1;
  int lanes = 1;
  int slots = 0;                              // mailbox slots, all replicas
  std::vector<std::vector<Op>> ops;           // per lane
  std::vector<Nanoseconds> gather_ns;         // per model chunk: one ZeRO-3 gather (0 = none)
  std::vector<int> layers;                    // per model chunk (gradient buckets)
  std::vector<int> refetch_layers;            // per model chunk: layers gathered twice in B
  std::vector<char> reduce_after_backward;    // per model chunk: R's buckets wait for the whole last B
  std::vector<double> activation_bytes;       // per model chunk
  std::vector<Nanoseconds> tp_forward_ns;     // per model chunk: TP communication inside F
  std::vector<Nanoseconds> tp_backward_ns;    // per model chunk: TP communication inside B
  std::vector<Nanoseconds> reduce_mb_ns;      // per model chunk: ZeRO-2/3 per-micro-batch reduce-scatter
  /// TP communication inside a compute op; the per-micro-batch reduce-scatter a releasing op issues.
  Nanoseconds tp_ns(const Op& op) const {
    return op.kind == ActionKind::Forward ? tp_forward_ns[op.model_chunk]
           : op.kind == ActionKind::Backward ? tp_backward_ns[op.model_chunk] : 0;
  }
  Nanoseconds reduce_ns(const Op& op) const { return op.releases ? reduce_mb_ns[op.model_chunk] : 0; }
  /// ZeRO-3 B in pieces: its first R = refetch_layers layers take two pieces each (the recomputed
  /// forward, then the backward, each after its own gather), the other layers one. Layers whose
  /// gradients are complete before piece k: k/2 up to k = 2R, then k - R (all L at k = L + R).
  int layers_done(const Op& op, int k) const {
    const int r = op.kind == ActionKind::Backward && op.pieces > 1 ? refetch_layers[op.model_chunk] : 0;
    return k <= 2 * r ? k / 2 : k - r;
  }
  std::vector<Nanoseconds> after_gather_ns;   // per rank
  double overlap_slowdown = 0;
  bool forward_prefetch = true;               // SimInput::forward_prefetch
  BackwardPrefetch backward_prefetch = BackwardPrefetch::Pre;
  /// Whether this gathered op's next piece (or, after its last, the next gathered op's first) may be
  /// gathered while it computes: F under forward prefetch, B under BACKWARD_PRE (core/framework_knobs.h).
  bool prefetches(const Op& op) const {
    return op.kind == ActionKind::Forward ? forward_prefetch : backward_prefetch == BackwardPrefetch::Pre;
  }
  int ep_group = 1;                           // replicas per expert-parallel group (1 = no joins)
  std::vector<char> ep_joins;                 // per model chunk x {F, B}: its op joins the EP group
  /// The op is an expert all-to-all every member of its EP group must reach (simulator/expert_join.h).
  bool joins_experts(const Op& op) const {
    if (ep_group <= 1 || (op.kind != ActionKind::Forward && op.kind != ActionKind::Backward)) return false;
    return ep_joins[op.model_chunk * 2 + (op.kind == ActionKind::Backward ? 1 : 0)] != 0;
  }
  int rank_of(int lane) const { return lane % pp; }
  int replica_of(int lane) const { return lane / pp; }
};

/// Mailbox slot of the message that model chunk `g_recv` receives for micro-batch `mb`:
/// forward = activation from g_recv-1, else gradient from g_recv+1.
inline int32_t mailbox_slot(const Program& p, int replica, bool forward, int g_recv, int mb) {
  const int chunks = p.pp * p.v;
  return static_cast<int32_t>(((replica * 2 + (forward ? 0 : 1)) * chunks + g_recv) * p.m + mb);
}

/// Assumes check_schedule passed. Applies compute and link slowdowns per lane.
Program compile_program(const SimInput& in);

/// Start of layer bucket `b` of `buckets` (ready when the gradient-producing op has done that
/// share of its work) and its share of `total` (the last bucket takes the remainder).
inline Nanoseconds bucket_ready_ns(Nanoseconds start, Nanoseconds dur, int b, int buckets) {
  return start + dur * (b + 1) / buckets;
}
inline Nanoseconds share_ns(Nanoseconds total, int i, int parts) {
  return total * (i + 1) / parts - total * i / parts;
}

}  // namespace meshplan
