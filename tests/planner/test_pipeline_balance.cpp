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

namespace {
// Llama 3.1 405B's depth (126 layers) on Llama 2 70B's widths: only the layer count matters to the split.
Problem deep126(Framework f = Framework::Megatron) {
  ModelSpec m = meshplan_test::llama2_70b();
  m.num_layers = 126;
  Problem p = meshplan_test::problem(m, 256, 1536, 4096);
  p.job.framework = f;
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}
}  // namespace

TEST_CASE("Megatron's embedding-and-loss split: 126 layers over PP 16 x VP 8 is 0, 1 x 126, 0") {
  const ModelSpec m = deep126().model;
  std::vector<int> expect(128, 1);
  expect.front() = expect.back() = 0;
  CHECK(embedding_loss_layers_per_chunk(m, 16, 8) == expect);
  // 128 slots over 64 chunks: 1, 2 x 62, 1, which is already the even split: no candidate of its own.
  CHECK(embedding_loss_layers_per_chunk(m, 16, 4).empty());
  CHECK(embedding_loss_layers_per_chunk(m, 3, 1).empty());   // 128 slots do not divide by 3
  CHECK(embedding_loss_layers_per_chunk(m, 1, 1).empty());   // no pipeline
  ModelSpec m62 = m;
  m62.num_layers = 62;  // 64 slots: over PP 4 x VP 8 (32 chunks) 1, 2 x 30, 1 = the even split; over 64 chunks 0, 1 x 62, 0
  CHECK(embedding_loss_layers_per_chunk(m62, 4, 8).empty());
  std::vector<int> e62(64, 1);
  e62.front() = e62.back() = 0;
  CHECK(embedding_loss_layers_per_chunk(m62, 16, 4) == e62);
  for (int pp : {2, 4, 8, 16, 32, 64})
    for (int v : {1, 2, 4, 8}) {
      const std::vector<int> s = embedding_loss_layers_per_chunk(m, pp, v);
      if (s.empty()) continue;
      INFO("pp " << pp << " v " << v);
      CHECK(layer_split_ok(s, static_cast<int64_t>(pp) * v, 126));
      CHECK(s.front() + 1 == s[1]);
      CHECK(s.back() + 1 == s[s.size() - 2]);
    }
}

TEST_CASE("the search tries the embedding-and-loss split where it is the only one for that v, megatron only") {
  SearchSpace only;
  only.tp = {8};
  only.pp = {16};
  only.zero = {1};
  only.micro_batch = {1};
  only.recompute = {Recompute::None};
  only.schedule = {ScheduleKind::Interleaved};
  only.virtual_stages = {8};
  const LayoutDims meg = layout_dims(deep126(), only, 8, 16, 1);
  REQUIRE(meg.schedules.size() == 1);  // the even split of 128 chunks over 126 layers is not a candidate
  CHECK(meg.schedules[0].layers_per_chunk.size() == 128);
  CHECK(meg.schedules[0].layers_per_chunk.front() == 0);
  const LayoutDims nemo = layout_dims(deep126(Framework::Nemo), only, 8, 16, 1);
  for (const ScheduleChoice& sc : nemo.schedules) CHECK(sc.layers_per_chunk.empty());
  // Unrestricted virtual stages over PP 16 include v = 8 (128 slots), besides the even split's.
  only.virtual_stages.clear();
  bool found = false;
  for (const ScheduleChoice& sc : layout_dims(deep126(), only, 8, 16, 1).schedules)
    found = found || (sc.virtual_stages == 8 && sc.layers_per_chunk.size() == 128);
  CHECK(found);
  only.pipeline_split = {0};  // even only: no such candidate
  for (const ScheduleChoice& sc : layout_dims(deep126(), only, 8, 16, 1).schedules) CHECK(sc.layers_per_chunk.empty());
}

TEST_CASE("pruned search equals exhaustive search with the embedding-and-loss splits in the space") {
  SearchOptions opt;
  opt.space.tp = {4, 8};
  opt.space.pp = {8, 16};
  opt.space.zero = {1};
  opt.space.micro_batch = {1};
  opt.space.schedule = {ScheduleKind::Interleaved, ScheduleKind::OneFOneB};
  opt.space.virtual_stages = {4, 8, 16};
  opt.pareto = true;
  opt.top_k = 8;
  const Problem p = deep126();
  const SearchResult fast = search(p, opt);
  const SearchResult plain = search_reference(p, opt);
  REQUIRE(fast.space == plain.space);
  REQUIRE(fast.space == count_space(p, opt.space));
  REQUIRE(fast.top.size() == plain.top.size());
  for (size_t i = 0; i < fast.top.size(); ++i) {
    INFO("position " << i);
    CHECK(!config_less(fast.top[i].config, plain.top[i].config));
    CHECK(!config_less(plain.top[i].config, fast.top[i].config));
    CHECK(fast.top[i].time.step_s == plain.top[i].time.step_s);
  }
  REQUIRE(fast.pareto.size() == plain.pareto.size());
  // Every candidate with such a split passes the rules: PP 16 x VP 8 and PP 8 x VP 16 reach the ranking.
  SearchOptions only = opt;
  only.space.pipeline_split = {2};
  only.space.pp = {16};
  only.space.virtual_stages = {8};
  only.space.schedule = {ScheduleKind::Interleaved};
  const SearchResult ends = search(p, only);
  REQUIRE(!ends.top.empty());
  CHECK(ends.top.front().config.layers_per_stage.size() == 128);
}
