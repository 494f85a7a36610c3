// summarize / verify_order: derived numbers and order checks from a SimResult (analysis.h).
#include "simulator/analysis.h"

#include <algorithm>

#include "core/pipeline_placement.h"

namespace meshplan {

std::string lane_name(const SimResult& r, int lane) {
  const std::string rank = "rank " + std::to_string(lane % r.pp);
  return r.replicas > 1 ? "replica " + std::to_string(lane / r.pp) + " " + rank : rank;
}

Breakdown lane_breakdown(const SimResult& r, int lane) {
  const LaneStats& l = r.lanes[lane];
  Breakdown b;
  b.compute_s = ns_to_seconds(l.compute_ns - l.tp_comm_ns);
  b.tp_comm_s = ns_to_seconds(l.tp_comm_ns);
  b.bubble_s = ns_to_seconds(l.bubble_ns);
  b.pp_comm_s = ns_to_seconds(l.p2p_wait_ns);
  b.dp_comm_s = ns_to_seconds(l.dp_wait_ns);
  b.zero3_gather_s = ns_to_seconds(l.gather_wait_ns);
  b.optimizer_s = ns_to_seconds(l.optimizer_ns);
  b.tail_s = ns_to_seconds(r.step_ns - l.end_ns);
  return b;
}

SimSummary summarize(const SimResult& r) {
  SimSummary s;
  s.step_s = ns_to_seconds(r.step_ns);
  for (int l = 0; l < static_cast<int>(r.lanes.size()); ++l)
    if (r.lanes[l].end_ns > r.lanes[s.critical_lane].end_ns) s.critical_lane = l;
  s.critical = lane_breakdown(r, s.critical_lane);
  Nanoseconds span = 0;
  for (int rank = 0; rank < r.pp; ++rank) span = std::max(span, r.lanes[rank].compute_end_ns);
  s.pipeline_s = ns_to_seconds(span);
  double idle = 0;
  for (int rank = 0; rank < r.pp; ++rank) {
    const LaneStats& l = r.lanes[rank];
    // Idle inside the pipeline phase that is not a communication wait: fill, drain, imbalance.
    idle += static_cast<double>(span - l.compute_ns - l.p2p_wait_ns - l.gather_wait_ns);
    StageReport st;
    st.stage = rank;
    st.peak_activation_bytes = l.peak_activation_bytes;
    st.peak_chunks = l.peak_in_flight;
    st.peak_in_flight = static_cast<double>(l.peak_in_flight) / r.virtual_stages;
    s.stages.push_back(st);
    if (st.peak_activation_bytes > s.stages[s.worst_stage].peak_activation_bytes) s.worst_stage = rank;
  }
  s.bubble_fraction = span > 0 ? idle / (static_cast<double>(span) * r.pp) : 0.0;
  return s;
}

namespace {

// First start and last end of each (kind, model chunk, mb) compute op; ZeRO-3 ops have pieces.
struct OpTimes {
  Nanoseconds start = -1, end = -1;
  int count = 0;  // ops seen (first pieces)
};

}  // namespace

Check verify_order(const Schedule& s, const SimResult& r) {
  Check c{"order", true, ""};
  const int pp = s.pp, v = s.virtual_stages, m = s.num_micro_batches, chunks = pp * v;
  const bool split = has_weight_actions(s);
  auto fail = [&](const std::string& d) {
    if (c.ok) c.detail = d;
    c.ok = false;
  };
  if (r.spans.empty()) return Check{"order", false, "no spans recorded"};
  for (int rep = 0; rep < r.replicas; ++rep) {
    // [kind 0..2][model chunk][mb]; pieces of one op extend start/end.
    std::vector<OpTimes> t(static_cast<size_t>(3) * chunks * m);
    auto at = [&](int k, int g, int mb) -> OpTimes& { return t[(static_cast<size_t>(k) * chunks + g) * m + mb]; };
    for (const Span& sp : r.spans) {
      if (sp.stream != Stream::Compute || sp.kind == ActionKind::OptimizerStep || sp.lane / pp != rep) continue;
      const int k = static_cast<int>(sp.kind);
      OpTimes& o = at(k, placed_chunk(s.kind, pp, sp.lane % pp, sp.chunk), sp.micro_batch);
      if (sp.piece == 0) ++o.count;  // later pieces continue the same op
      if (o.start < 0) o.start = sp.start_ns;
      o.end = std::max(o.end, sp.end_ns);
    }
    for (int g = 0; g < chunks; ++g)
      for (int mb = 0; mb < m; ++mb) {
        const std::string id = std::to_string(mb) + "." + std::to_string(chunk_local_index(s.kind, pp, g)) + " on rank " +
                               std::to_string(chunk_rank(s.kind, pp, g));
        const OpTimes& f = at(0, g, mb);
        const OpTimes& b = at(1, g, mb);
        const OpTimes& w = at(2, g, mb);
        if (f.count != 1 || b.count != 1 || (split && w.count != 1))
          fail("F/B" + std::string(split ? "/W" : "") + id + " ran " + std::to_string(f.count) + "/" +
               std::to_string(b.count) + (split ? "/" + std::to_string(w.count) : "") + " times (expected once)");
        if (g > 0 && f.start < at(0, g - 1, mb).end) fail("F" + id + " started before the previous chunk's F ended");
        if (g + 1 < chunks && b.start < at(1, g + 1, mb).end) fail("B" + id + " started before the next chunk's B ended");
        if (b.start < f.end) fail("B" + id + " started before its F ended");
        if (split && w.start < b.end) fail("W" + id + " started before its B ended");
      }
  }
  if (c.ok)
    c.detail = "every F/B" + std::string(split ? "/W" : "") + " ran once per micro-batch and chunk, after its inputs";
  return c;
}

}  // namespace meshplan
