// Megatron-Core's CUDA graph scopes (core/cuda_graphs.h): names in the enum's order, parsing, and the
// rules of transformer_config.py __post_init__ (core_v0.16.0).
#include <catch2/catch.hpp>

#include "core/cuda_graphs.h"
#include "core/framework.h"
#include "core/parallel_config.h"

using namespace meshplan;

namespace {
Problem moe_problem(uint32_t graphs) {
  Problem p;
  p.model.name = "tiny-moe";
  p.model.num_layers = 4;
  p.model.moe.num_experts = 8;
  p.model.moe.experts_per_token = 2;
  p.job.framework = Framework::Megatron;
  p.job.knobs.cuda_graphs = graphs;
  return p;
}
ErrorList check(const Problem& p, Recompute r = Recompute::None) {
  ParallelConfig c;
  c.recompute = r;
  ErrorList e;
  check_cuda_graphs(p, c, "test", e);
  return e;
}
}  // namespace

TEST_CASE("CUDA graph scope names read and print in the enum's order") {
  CHECK(cuda_graph_scopes_text(kGraphMoePreprocess | kGraphAttn | kGraphMoeRouter) == "attn,moe_router,moe_preprocess");
  CHECK(cuda_graph_scopes_text(kGraphAttn | kGraphMoe, " ") == "attn moe");
  CHECK(parse_cuda_graph_scopes("moe_router moe_preprocess,attn") == (kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess));
  const uint32_t all = kGraphAttn | kGraphMlp | kGraphMoe | kGraphMoeRouter | kGraphMoePreprocess | kGraphFullIteration;
  CHECK(parse_cuda_graph_scopes(cuda_graph_scopes_text(all)) == all);
  std::string bad;
  CHECK_FALSE(parse_cuda_graph_scopes("attn,full", &bad));
  CHECK(bad == "full");
  CHECK_FALSE(parse_cuda_graph_scopes("attn attn", &bad));
  CHECK_FALSE(parse_cuda_graph_scopes(""));
}

TEST_CASE("CUDA graph scopes follow Megatron-Core's rules") {
  CHECK(check(moe_problem(kGraphAttn | kGraphMoeRouter | kGraphMoePreprocess)).empty());
  CHECK(check(moe_problem(kGraphFullIteration)).empty());
  CHECK(check(moe_problem(kGraphFullIteration), Recompute::Full).empty());
  CHECK(check(moe_problem(kGraphFullIteration | kGraphAttn)).size() == 1);
  CHECK(check(moe_problem(kGraphMoe | kGraphMoeRouter)).size() == 1);
  CHECK(check(moe_problem(kGraphMoePreprocess)).size() == 1);
  CHECK(check(moe_problem(kGraphMlp)).size() == 1);  // every layer is MoE
  CHECK(check(moe_problem(kGraphAttn), Recompute::Full).size() == 1);
  Problem dense = moe_problem(kGraphMoeRouter);
  dense.model.moe = MoeSpec{};
  CHECK(check(dense).size() == 1);
  dense.job.knobs.cuda_graphs = kGraphAttn | kGraphMlp;
  CHECK(check(dense).empty());
  Problem offload = moe_problem(kGraphAttn);
  offload.job.knobs.activation_offload_layers = 2;
  CHECK(check(offload).size() == 1);
}

TEST_CASE("the moe and full_iteration scopes need drop-and-pad MoE layers") {
  CHECK(graphs_need_drop_and_pad(moe_problem(kGraphAttn | kGraphMoe)));
  CHECK(graphs_need_drop_and_pad(moe_problem(kGraphFullIteration)));
  CHECK_FALSE(graphs_need_drop_and_pad(moe_problem(kGraphAttn | kGraphMoeRouter)));
  Problem dense = moe_problem(kGraphFullIteration);
  dense.model.moe = MoeSpec{};
  CHECK_FALSE(graphs_need_drop_and_pad(dense));
}
