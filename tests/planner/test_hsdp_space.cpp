// The planner's HSDP choices (planner/hsdp_space.h): shard groups per layout, the --shard-group list,
// and a search that picks HSDP where the inter-node links are slow.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/hsdp_config.h"
#include "planner/hsdp_space.h"
#include "planner/search.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::on;
using planner_test::problem;

namespace {
LayoutDims dims(const Problem& p, const SearchSpace& s, int tp) { return layout_dims(p, s, tp, 1, 1); }
}  // namespace

TEST_CASE("HSDP shard groups: one NVLink domain's DP ranks doubled while below dp and only where the framework runs HSDP") {
  const Problem base = problem("llama-2-13b", "a100-80gb-sxm", 64, 128, 4096);
  SearchSpace s;
  CHECK(hsdp_shard_groups(on(base, Framework::Fsdp), s, dims(on(base, Framework::Fsdp), s, 1)) ==
        std::vector<int>{8, 16, 32});
  // torchtitan at tp 2: 4 DP ranks per node, dp 32.
  const Problem tt = on(base, Framework::Torchtitan);
  CHECK(hsdp_shard_groups(tt, s, dims(tt, s, 2)) == std::vector<int>{4, 8, 16});
  // Megatron: the partial distributed optimizer (ZeRO 1 within instances of dp/R ranks); its ZeRO 2 and
  // 3 (Megatron-FSDP) shard plainly.
  const Problem mg = on(base, Framework::Megatron);
  CHECK(hsdp_shard_groups(mg, s, dims(mg, s, 1)) == std::vector<int>{8, 16, 32});
  const std::vector<ZeroChoice> mg_choices = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {1, 8}, {1, 16}, {1, 32}};
  CHECK(dims(mg, s, 1).shardings == mg_choices);
  for (Framework f : {Framework::Meshplan, Framework::DeepSpeed, Framework::Nemo}) {
    INFO(to_string(f));
    const Problem q = on(base, f);
    CHECK(hsdp_shard_groups(q, s, dims(q, s, 1)).empty());
  }
  // The --shard-group list: divisors of dp below it; 0 and dp mean plain sharding.
  s.shard_group = {0, 7, 8, 64, 16, 8};
  const Problem f = on(base, Framework::Fsdp);
  CHECK(hsdp_shard_groups(f, s, dims(f, s, 1)) == std::vector<int>{8, 16});
}

TEST_CASE("sharding choices: every ZeRO stage plain first, then ZeRO 2 and 3 per shard group") {
  const Problem p = on(problem("llama-2-13b", "a100-80gb-sxm", 16, 32, 4096), Framework::Fsdp);
  SearchSpace s;
  const LayoutDims d = layout_dims(p, s, 1, 1, 1);
  REQUIRE(d.zeros == std::vector<int>{0, 2, 3});  // FSDP: NO_SHARD, SHARD_GRAD_OP, FULL_SHARD
  const std::vector<ZeroChoice> want = {{0, 0}, {2, 0}, {3, 0}, {2, 8}, {3, 8}};
  CHECK(d.shardings == want);
  // Only HSDP: a list without 0 drops plain ZeRO 2/3 (ZeRO 0 has nothing to shard and stays).
  s.shard_group = {8};
  const std::vector<ZeroChoice> only = {{0, 0}, {2, 8}, {3, 8}};
  CHECK(layout_dims(p, s, 1, 1, 1).shardings == only);
  // Counting follows the choices (the plain enumerator and the fast search visit the same space).
  CHECK(count_per_micro_batch(d) ==
        static_cast<int64_t>(d.schedules.size() * 5 * d.sequence_parallel.size() * d.recomputes.size() *
                             d.dp_overlaps.size()));
}

TEST_CASE("the planner picks HSDP when ZeRO-3 traffic across slow inter-node links is exposed") {
  // Llama 2 7B on 128 A100s joined by 12.5 Gb/s per GPU: FULL_SHARD gathers over all 16 nodes wait,
  // HSDP gathers over NVLink and all-reduces an eighth of the gradients across nodes.
  Problem p = on(problem("llama-2-7b", "a100-80gb-sxm", 128, 256, 4096), Framework::Fsdp);
  p.job.knobs = framework_knobs(framework_spec(Framework::Fsdp));
  p.hardware.inter_node.bandwidth_bytes_per_s = 12.5e9 / 8.0;
  SearchOptions opt;
  opt.space.zero = {3};
  opt.space.micro_batch = {2};
  opt.top_k = 3;
  const SearchResult r = search(p, opt);
  const SearchResult plain = search_reference(p, opt);
  REQUIRE_FALSE(r.top.empty());
  CHECK(hsdp_enabled(r.top.front().config));
  CHECK(r.top.front().time.step_s == plain.top.front().time.step_s);
  for (const StepEstimate& e : r.top) CHECK(validate_framework(p, e.config, "t").empty());
  // Narrowed to plain sharding, the best is slower.
  opt.space.shard_group = {0};
  const SearchResult flat = search(p, opt);
  REQUIRE_FALSE(flat.top.empty());
  CHECK_FALSE(hsdp_enabled(flat.top.front().config));
  CHECK(flat.top.front().time.step_s > r.top.front().time.step_s);
}
