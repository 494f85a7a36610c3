// Names and rules of Megatron-Core's CUDA graph scopes (core/cuda_graphs.h).
#include "core/cuda_graphs.h"

#include "core/name_bits.h"
#include "core/parallel_config.h"

namespace meshplan {

namespace {
constexpr NamedBit kNames[] = {{kGraphAttn, "attn"},
                               {kGraphMlp, "mlp"},
                               {kGraphMoe, "moe"},
                               {kGraphMoeRouter, "moe_router"},
                               {kGraphMoePreprocess, "moe_preprocess"},
                               {kGraphFullIteration, "full_iteration"}};

bool has_dense_layers(const ModelSpec& m) {
  if (!m.moe.enabled()) return true;
  for (int64_t i = 0; i < m.num_layers; ++i)
    if (!m.moe.is_moe_layer(i)) return true;
  return false;
}
}  // namespace

std::vector<std::string> cuda_graph_scope_names(uint32_t scopes) { return bit_names(named_bits(kNames), scopes); }

std::string cuda_graph_scopes_text(uint32_t scopes, const std::string& separator) {
  return bit_names_text(named_bits(kNames), scopes, separator);
}

std::optional<uint32_t> parse_cuda_graph_scopes(const std::string& s, std::string* bad) {
  return parse_bit_names(named_bits(kNames), s, bad);
}

bool graphs_need_drop_and_pad(const Problem& p) {
  return p.model.moe.enabled() && (p.job.knobs.cuda_graphs & (kGraphMoe | kGraphFullIteration)) != 0;
}

void check_cuda_graphs(const Problem& p, const ParallelConfig& c, const std::string& w, ErrorList& e) {
  const uint32_t g = p.job.knobs.cuda_graphs;
  if (g == 0) return;
  const std::string text = cuda_graph_scopes_text(g);
  auto fail = [&](const std::string& why, const std::string& hint) {
    e.push_back(make_error(w, "--cuda-graphs", text, why, hint));
  };
  if ((g & kGraphFullIteration) && g != kGraphFullIteration)
    fail("full_iteration captures the whole iteration (--cuda-graph-impl local) and takes no other scope",
         "use full_iteration alone, or the per-layer scopes");
  if ((g & kGraphMoe) && (g & kGraphMoeRouter))
    fail("moe already captures the router (Megatron-Core: 'must not contain both moe and moe_router')",
         "drop moe_router");
  if ((g & kGraphMoePreprocess) && !(g & kGraphMoeRouter))
    fail("moe_preprocess is captured only with moe_router", "add moe_router");
  if ((g & (kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess)) && !p.model.moe.enabled())
    fail("moe, moe_router and moe_preprocess capture MoE layers; " + p.model.name + " is dense", "drop them");
  if ((g & kGraphMlp) && !has_dense_layers(p.model))
    fail("mlp captures dense layers' MLP; every layer of " + p.model.name + " is MoE", "drop mlp (moe captures MoE layers)");
  if (c.recompute == Recompute::Full && g != kGraphFullIteration)
    fail("full recompute runs only under the full_iteration graph (Megatron-Core asserts it)",
         "use --cuda-graphs full_iteration or another --recompute");
  if (p.job.knobs.activation_offload_layers > 0)
    fail("Megatron-Core raises 'CUDA graphs not supported with CPU offloading'",
         "drop --activation-offload-layers or --cuda-graphs");
}

}  // namespace meshplan
