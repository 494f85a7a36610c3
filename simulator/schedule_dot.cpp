// schedule_dot: the dependency graph of a schedule as DOT text (no Graphviz library here).
#include <string>
#include <vector>

#include "core/pipeline_placement.h"
#include "simulator/schedule_check.h"
#include "simulator/timeline_text.h"

namespace meshplan {

namespace {

std::string node_id(int rank, int index) { return "r" + std::to_string(rank) + "_" + std::to_string(index); }

const char* fill_of(ActionKind k) {
  switch (k) {
    case ActionKind::Forward: return "#a0cbe8";
    case ActionKind::Backward: return "#8cd17d";
    case ActionKind::BackwardWeight: return "#86bcb6";
    case ActionKind::ReduceGrads: return "#ffbe7d";
    case ActionKind::OptimizerStep: return "#d7b5a6";
    default: return "#e5d0e0";  // send / recv
  }
}

}  // namespace

int schedule_dot_nodes(const Schedule& s) {
  int n = 0;
  for (const auto& acts : s.ranks) n += static_cast<int>(acts.size());
  return n;
}

std::string schedule_dot(const Schedule& s) {
  std::string out = "digraph schedule {\n  rankdir=LR;\n  node [shape=box, style=filled, fontname=\"sans-serif\", fontsize=10];\n";
  for (int r = 0; r < s.pp; ++r) {
    out += "  subgraph cluster_rank" + std::to_string(r) + " {\n    label=\"rank " + std::to_string(r) + "\";\n";
    const auto& acts = s.ranks[r];
    for (int i = 0; i < static_cast<int>(acts.size()); ++i)
      out += "    " + node_id(r, i) + " [label=\"" + action_label(acts[i]) + "\", fillcolor=\"" + fill_of(acts[i].kind) + "\"];\n";
    for (int i = 1; i < static_cast<int>(acts.size()); ++i)
      out += "    " + node_id(r, i - 1) + " -> " + node_id(r, i) + " [color=\"#999999\"];\n";
    out += "  }\n";
  }
  // Send -> receive: SF of model chunk g feeds RF of g+1; SB of g feeds RB of g-1 (same micro-batch).
  // recv_at[rank][(dir * v + chunk) * M + mb] = index of that receive on the rank.
  const int v = s.virtual_stages, m = s.num_micro_batches;
  std::vector<std::vector<int>> recv_at(s.pp, std::vector<int>(static_cast<size_t>(2) * v * m, -1));
  for (int r = 0; r < s.pp; ++r)
    for (int i = 0; i < static_cast<int>(s.ranks[r].size()); ++i) {
      const Action& a = s.ranks[r][i];
      if (a.kind == ActionKind::RecvForward || a.kind == ActionKind::RecvBackward)
        recv_at[r][((a.kind == ActionKind::RecvBackward ? v : 0) + a.chunk) * m + a.micro_batch] = i;
    }
  for (int r = 0; r < s.pp; ++r)
    for (int i = 0; i < static_cast<int>(s.ranks[r].size()); ++i) {
      const Action& a = s.ranks[r][i];
      if (a.kind != ActionKind::SendForward && a.kind != ActionKind::SendBackward) continue;
      const bool fwd = a.kind == ActionKind::SendForward;
      const int g = model_chunk(s, r, a.chunk) + (fwd ? 1 : -1);
      const int peer = chunk_rank(s.kind, s.pp, g), chunk = chunk_local_index(s.kind, s.pp, g);
      const int j = recv_at[peer][((fwd ? 0 : v) + chunk) * m + a.micro_batch];
      if (j >= 0) out += "  " + node_id(r, i) + " -> " + node_id(peer, j) + " [color=\"#d62728\", constraint=false];\n";
    }
  out += "}\n";
  return out;
}

}  // namespace meshplan
