// The head-aware balanced pipeline split (planner/pipeline_balance.h): Megatron-Bridge's DeepSeek-V3
// layout found from FLOPs, even splits left alone, ranks evened out, only frameworks that take uneven
// chunks searched with it, and the fast search equal to the plain one with the twins in the space.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>

#include "../costmodel/fixtures.h"
#include "../costmodel/moe_fixtures.h"
#include "core/framework.h"
#include "costmodel/flops.h"
#include "costmodel/mtp.h"
#include "planner/enumerate.h"
#include "planner/pipeline_balance.h"
#include "planner/ranking.h"
#include "planner/search.h"

using namespace meshplan;

namespace {
Problem v3_mtp(Framework f = Framework::Megatron) {
  Problem p = meshplan_test::problem(meshplan_test::deepseek_v3(), 256, 4096, 4096);
  p.model.mtp_layers = 1;
  p.job.framework = f;
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}

// Forward FLOPs per token of each pipeline rank, in layers: its layers plus, on the last, head and MTP.
std::vector<double> rank_loads(const Problem& p, int pp, int v, const std::vector<int>& chunks) {
  const double seq = static_cast<double>(p.job.seq_len);
  const double layer = layer_forward_flops(p.model, 1, seq).total();
  const double head = (logits_forward_flops(p.model, 1, seq) + mtp_forward_flops(p.model, 1, seq, layer)) / layer;
  std::vector<double> load(static_cast<size_t>(pp), 0.0);
  for (size_t c = 0; c < chunks.size(); ++c) load[c % pp] += chunks[c];
  load.back() += head;
  (void)v;
  return load;
}
}  // namespace

TEST_CASE("DeepSeek-V3 with MTP over PP 16: the balanced split is Megatron-Bridge's layout, 4 layers a chunk and 1 on the last") {
  const std::vector<int> split = balanced_layers_per_chunk(v3_mtp(), 16, 1);
  std::vector<int> bridge(15, 4);
  bridge.push_back(1);
  CHECK(split == bridge);
}

TEST_CASE("a model whose head is small against a rank's layers keeps the even split") {
  const Problem llama = meshplan_test::problem(meshplan_test::llama2_7b(), 32, 64, 4096);
  CHECK(balanced_layers_per_chunk(llama, 4, 1).empty());  // 8 layers a rank, the head is 0.6 of one
  CHECK(balanced_layers_per_chunk(llama, 1, 1).empty());
  CHECK(balanced_layers_per_chunk(llama, 32, 2).empty());  // more chunks than layers
}

TEST_CASE("balanced splits cover every layer, keep a layer per chunk and even out the ranks") {
  for (int pp : {4, 8, 16})
    for (int v : {1, 2, 3}) {
      const Problem p = v3_mtp();
      const std::vector<int> split = balanced_layers_per_chunk(p, pp, v);
      INFO("pp " << pp << " v " << v);
      if (split.empty()) continue;
      CHECK(split.size() == static_cast<size_t>(pp * v));
      CHECK(std::accumulate(split.begin(), split.end(), 0) == 61);
      CHECK(*std::min_element(split.begin(), split.end()) >= 1);
      ParallelConfig even;
      even.pp = pp;
      even.virtual_stages = v;
      const std::vector<double> before = rank_loads(p, pp, v, layers_per_chunk(p.model, even));
      const std::vector<double> after = rank_loads(p, pp, v, split);
      CHECK(*std::max_element(after.begin(), after.end()) < *std::max_element(before.begin(), before.end()));
      if (v > 1) CHECK(split.back() <= split[split.size() - 1 - static_cast<size_t>(pp)]);  // head chunk: the fewer
    }
}

TEST_CASE("the search tries the balanced split only where the framework takes uneven chunks") {
  SearchSpace only;
  only.tp = {1};
  only.pp = {16};
  only.ep = {8};
  only.etp = {1};
  only.zero = {1};
  only.micro_batch = {1};
  only.recompute = {Recompute::Full};
  only.schedule = {ScheduleKind::OneFOneB};
  const LayoutDims meg = layout_dims(v3_mtp(), only, 1, 16, 1);
  REQUIRE(meg.schedules.size() == 2);
  CHECK(meg.schedules[0].layers_per_chunk.empty());
  CHECK(meg.schedules[1].layers_per_chunk.size() == 16);
  const LayoutDims nemo = layout_dims(v3_mtp(Framework::Nemo), only, 1, 16, 1);
  for (const ScheduleChoice& sc : nemo.schedules) CHECK(sc.layers_per_chunk.empty());
  only.pipeline_split = {1};
  const LayoutDims balanced = layout_dims(v3_mtp(), only, 1, 16, 1);
  REQUIRE(balanced.schedules.size() == 1);
  CHECK(balanced.schedules[0].layers_per_chunk.size() == 16);
  // The best plan at that layout is the balanced one: the even split's last rank runs four layers,
  // the LM head twice and the MTP layer.
  SearchOptions opt;
  opt.space = only;
  opt.space.pipeline_split.clear();
  opt.top_k = 2;
  const SearchResult r = search(v3_mtp(), opt);
  REQUIRE(!r.top.empty());
  CHECK(r.top.front().config.layers_per_stage.size() == 16);
}

TEST_CASE("pruned search equals exhaustive search with the balanced twins (DeepSeek-V3 with MTP)") {
  SearchOptions opt;
  opt.space.tp = {1, 2};
  opt.space.pp = {8, 16};
  opt.space.ep = {8, 32};
  opt.space.etp = {1};
  opt.space.zero = {1};
  opt.space.micro_batch = {1};
  opt.space.virtual_stages = {2};
  opt.pareto = true;
  opt.top_k = 8;
  const Problem p = v3_mtp();
  const SearchResult fast = search(p, opt);
  const SearchResult plain = search_reference(p, opt);
  REQUIRE(fast.space == plain.space);
  REQUIRE(fast.space == count_space(p, opt.space));
  REQUIRE(fast.top.size() == plain.top.size());
  bool any_balanced = false;
  for (size_t i = 0; i < fast.top.size(); ++i) {
    INFO("position " << i);
    CHECK(!config_less(fast.top[i].config, plain.top[i].config));
    CHECK(!config_less(plain.top[i].config, fast.top[i].config));
    CHECK(fast.top[i].time.step_s == plain.top[i].time.step_s);
    any_balanced = any_balanced || !fast.top[i].config.layers_per_stage.empty();
  }
  CHECK(any_balanced);
  REQUIRE(fast.pareto.size() == plain.pareto.size());
}
