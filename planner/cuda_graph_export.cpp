// Megatron-LM flags and NeMo keys of the CUDA graph scopes (planner/cuda_graph_export.h).
#include "planner/cuda_graph_export.h"

#include "core/cuda_graphs.h"

namespace meshplan {

namespace {
bool full_iteration(const Problem& p) { return (p.job.knobs.cuda_graphs & kGraphFullIteration) != 0; }
}  // namespace

std::vector<std::pair<std::string, std::string>> megatron_cuda_graph_flags(const Problem& p, const ParallelConfig& c) {
  std::vector<std::pair<std::string, std::string>> f;
  const uint32_t g = p.job.knobs.cuda_graphs;
  if (g == 0) return f;
  f.push_back({"--cuda-graph-impl", full_iteration(p) ? "local" : "transformer_engine"});
  f.push_back({"--cuda-graph-scope", cuda_graph_scopes_text(g, " ")});  // nargs "+"
  if (full_iteration(p)) {
    f.push_back({"--no-check-for-nan-in-loss-and-grad", ""});
    if (c.ep > 1) f.push_back({"--moe-pad-experts-for-cuda-graph-inference", ""});
  }
  if (graphs_need_drop_and_pad(p)) {
    // A capacity factor the job sets is already written (planner/moe_export.h).
    if (p.job.moe_capacity_factor <= 0) f.push_back({"--moe-expert-capacity-factor", "1.0"});
    f.push_back({"--moe-pad-expert-input-to-capacity", ""});
  }
  return f;
}

std::string nemo_cuda_graph_keys(const Problem& p) {
  const uint32_t g = p.job.knobs.cuda_graphs;
  if (g == 0) return "";
  std::string s = std::string("  cuda_graph_impl: ") + (full_iteration(p) ? "local" : "transformer_engine") + "\n" +
                  "  cuda_graph_scope: [" + cuda_graph_scopes_text(g, ", ") + "]\n";
  if (graphs_need_drop_and_pad(p)) {
    if (p.job.moe_capacity_factor <= 0) s += "  moe_expert_capacity_factor: 1.0\n";
    s += "  moe_pad_expert_input_to_capacity: true\n";
  }
  return s;
}

Result<bool> check_cuda_graph_export(const std::string& kind, const Problem& p) {
  if (p.job.knobs.cuda_graphs == 0 || kind == "megatron" || kind == "nemo") return true;
  return make_error("--export " + kind, "cuda_graphs", cuda_graph_scopes_text(p.job.knobs.cuda_graphs),
                    "are Megatron-Core's CUDA graph scopes; " + kind + " has no such setting",
                    "plan without --cuda-graphs, or export for megatron or nemo");
}

}  // namespace meshplan
