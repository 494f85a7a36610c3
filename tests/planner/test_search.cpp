// The fast search against its plain twin: same top K, same Pareto front, same rejection counts.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>
#include <tuple>

#include "core/framework.h"
#include "planner/plan_table.h"
#include "planner/search.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::problem;

namespace {

bool same_config(const ParallelConfig& a, const ParallelConfig& b) {
  return !config_less(a, b) && !config_less(b, a) && a.dp == b.dp &&
         a.num_micro_batches == b.num_micro_batches;
}

void require_same(const std::vector<StepEstimate>& fast, const std::vector<StepEstimate>& plain) {
  REQUIRE(fast.size() == plain.size());
  for (size_t i = 0; i < fast.size(); ++i) {
    INFO("position " << i);
    CHECK(same_config(fast[i].config, plain[i].config));
    CHECK(fast[i].time.step_s == plain[i].time.step_s);
    CHECK(fast[i].memory.peak_bytes == plain[i].memory.peak_bytes);
  }
}

// With a reference deep in the ranking (the exhaustive search's 4K-th best, or its last when fewer fit),
// both searches count exactly the configurations ranked above it, and the fast one still prunes.
void compare_rank(const Problem& p, SearchOptions opt) {
  SearchOptions deep = opt;
  deep.top_k = 4 * std::max(opt.top_k, 1);
  deep.pareto = false;
  const std::vector<StepEstimate> ranked = search_reference(p, deep).top;
  REQUIRE(!ranked.empty());
  const int64_t rank = static_cast<int64_t>(ranked.size()) - 1;  // configurations better than the last
  opt.reference = ranked.back();
  const SearchResult fast = search(p, opt), plain = search_reference(p, opt);
  INFO("reference " << describe_config(ranked.back().config));
  CHECK(plain.better_than_reference == rank);
  CHECK(fast.better_than_reference == rank);
  require_same(fast.top, plain.top);  // the reference changes what is counted, not what is found
  std::printf("  reference ranked %lld: fast search %lld estimates, %lld pruned\n", static_cast<long long>(rank + 1),
              static_cast<long long>(fast.evaluated), static_cast<long long>(fast.pruned));
}

// Runs both searches and requires identical answers; returns the fast one.
SearchResult compare(const Problem& p, SearchOptions opt) {
  const SearchResult fast = search(p, opt);
  const SearchResult plain = search_reference(p, opt);
  std::printf("%s on %lld: space %lld, fitting %lld; fast: %lld memory checks, %lld estimates, "
              "%lld pruned; naive: %lld estimates\n",
              p.model.name.c_str(), static_cast<long long>(p.job.gpus),
              static_cast<long long>(fast.space), static_cast<long long>(fast.fitting()),
              static_cast<long long>(fast.memory_checks), static_cast<long long>(fast.evaluated),
              static_cast<long long>(fast.pruned), static_cast<long long>(plain.evaluated));
  REQUIRE(fast.space == plain.space);
  REQUIRE(fast.space == count_space(p, opt.space));
  for (int i = 0; i < kNumReasons; ++i) {
    INFO("reason " << reason_name(static_cast<Reason>(i)));
    CHECK(fast.rejected.n[i] == plain.rejected.n[i]);
  }
  require_same(fast.top, plain.top);
  require_same(fast.pareto, plain.pareto);
  CHECK(fast.evaluated + fast.pruned <= fast.fitting());
  CHECK(fast.evaluated + fast.pruned + fast.rejected.total() >= fast.space - fast.rejected[Reason::Memory]);
  CHECK(fast.better_than_reference == 0);  // no reference given
  compare_rank(p, opt);
  return fast;
}

}  // namespace

TEST_CASE("pruned search equals exhaustive search: 7B on 16 A100-40GB (memory-bound)") {
  const Problem p = problem("llama-2-7b", "a100-40gb-sxm", 16, 64, 4096);
  SearchOptions opt;
  opt.top_k = 8;
  const SearchResult r = compare(p, opt);
  CHECK(r.rejected[Reason::Memory] > 0);
  CHECK(r.fitting() > 0);
}

TEST_CASE("pruned search equals exhaustive search: 13B on 32 A100-80GB with top 10") {
  const Problem p = problem("llama-2-13b", "a100-80gb-sxm", 32, 128, 4096);
  SearchOptions opt;
  opt.top_k = 10;
  const SearchResult r = compare(p, opt);
  CHECK(r.pruned > 0);  // the time bound does work here
}

TEST_CASE("pruned search equals exhaustive search: GPT-2 124M on 8 L40S (tied embeddings and biases)") {
  const Problem p = problem("gpt2-124m", "l40s-pcie-eth", 8, 32, 1024);
  SearchOptions opt;
  compare(p, opt);
}

TEST_CASE("pruned search equals exhaustive search: 1.1B on 12 GPUs with uneven stages and Pareto") {
  const Problem p = problem("tinyllama-1.1b", "a100-40gb-sxm", 12, 48, 2048);
  SearchOptions opt;
  opt.pareto = true;
  opt.top_k = 3;
  const SearchResult r = compare(p, opt);
  CHECK(r.pareto.size() >= 2);
}

TEST_CASE("pruned search equals exhaustive search: 22B on 24 H100 with narrowed flags and Pareto") {
  const Problem p = problem("megatron-gpt-22b", "h100-80gb-sxm", 24, 96, 2048);
  SearchOptions opt;
  opt.space.zero = {1, 2, 3};
  opt.space.tp = {2, 4, 8, 3};  // 3 divides neither the heads (64) nor 24/.. everywhere
  opt.space.recompute = {Recompute::Selective, Recompute::Full};
  opt.pareto = true;
  opt.top_k = 4;
  const SearchResult r = compare(p, opt);
  CHECK(r.rejected[Reason::TpDividesHeads] > 0);
}

TEST_CASE("pruned search equals exhaustive search: 70B on 64 A100-40GB under memory pressure") {
  const Problem p = problem("llama-2-70b", "a100-40gb-sxm", 64, 128, 4096);
  SearchOptions opt;
  opt.space.max_pp = 16;
  compare(p, opt);
}

TEST_CASE("pruned search equals exhaustive search: 7B on 16 H100 at 32K tokens (context parallel searched)") {
  const Problem p = problem("llama-2-7b", "h100-80gb-sxm", 16, 16, 32768);
  SearchOptions opt;
  opt.top_k = 5;
  opt.pareto = true;
  const SearchResult r = compare(p, opt);
  REQUIRE(!r.top.empty());
  // cp in {1, 2, 4, 8}: the space holds CP layouts, and at 32K tokens one of them wins.
  CHECK(r.top.front().config.cp > 1);
  for (const StepEstimate& e : r.top) CHECK(e.config.dp * e.config.tp * e.config.cp * e.config.pp == 16);
}

TEST_CASE("search results do not depend on top-K beyond its length") {
  const Problem p = problem("llama-2-13b", "a100-80gb-sxm", 16, 64, 4096);
  SearchOptions one, many;
  one.top_k = 1;
  many.top_k = 20;
  const SearchResult a = search(p, one), b = search(p, many);
  REQUIRE(a.top.size() == 1);
  REQUIRE(b.top.size() == 20);
  CHECK(same_config(a.top[0].config, b.top[0].config));
  for (size_t i = 1; i < b.top.size(); ++i) CHECK(!estimate_better(b.top[i], b.top[i - 1]));
  CHECK(a.rejected == b.rejected);
}

TEST_CASE("narrowing flags restrict every candidate") {
  const Problem p = problem("llama-2-13b", "a100-80gb-sxm", 32, 128, 4096);
  SearchOptions opt;
  opt.top_k = 50;
  opt.space.tp = {2, 4};
  opt.space.zero = {1};
  opt.space.schedule = {ScheduleKind::OneFOneB};
  opt.space.recompute = {Recompute::Selective};
  opt.space.micro_batch = {1, 2};
  const SearchResult r = search(p, opt);
  REQUIRE(!r.top.empty());
  for (const StepEstimate& e : r.top) {
    CHECK((e.config.tp == 2 || e.config.tp == 4));
    CHECK(e.config.zero_stage == 1);
    CHECK((e.config.schedule == ScheduleKind::OneFOneB));
    CHECK((e.config.recompute == Recompute::Selective));
    CHECK(e.config.micro_batch_size <= 2);
    CHECK(e.fits);
  }
}

TEST_CASE("the progress callback reaches the size of the space") {
  const Problem p = problem("llama-2-7b", "a100-80gb-sxm", 8, 32, 2048);
  SearchOptions opt;
  int64_t last_done = -1, total = 0;
  opt.progress = [&](int64_t done, int64_t all) {
    CHECK(done >= last_done);
    last_done = done;
    total = all;
  };
  const SearchResult r = search(p, opt);
  CHECK(last_done == r.space);
  CHECK(total == r.space);
}

// The time bound's premise, checked directly: within a group of siblings that differ only in ZeRO
// stage and DP overlap, the pipeline floor of any sibling with nothing hidden (overlap off, or
// dp = 1) is at most every sibling's step time.
TEST_CASE("the pipeline floor of a bare sibling bounds every ZeRO/overlap sibling") {
  // torchtitan's knobs add FSDP2's copies and foreach AdamW to ZeRO-3 (its only stage): still bounded.
  Problem titan = problem("llama-2-13b", "h100-80gb-sxm", 32, 128, 4096);
  titan.job.framework = Framework::Torchtitan;
  titan.job.convention = framework_spec(Framework::Torchtitan).convention;
  titan.job.knobs = framework_knobs(framework_spec(Framework::Torchtitan));
  for (const Problem& p : {problem("llama-2-7b", "a100-40gb-sxm", 16, 64, 4096),
                           problem("megatron-gpt-22b", "h100-80gb-sxm", 24, 96, 2048),
                           problem("llama-2-70b", "a100-80gb-sxm", 64, 256, 4096), titan}) {
    using Key = std::tuple<int, int, int64_t, int, int, bool, int, std::vector<int>>;
    std::map<Key, std::pair<double, double>> groups;  // max bare floor, min sibling step
    int64_t siblings = 0;
    for_each_config(p, SearchSpace{}, [&](const ParallelConfig& c, Reason why, int64_t) {
      if (why != Reason::None) return;
      const StepEstimate e = estimate_step(p, c);
      const Key k{c.tp, c.pp, c.micro_batch_size, static_cast<int>(c.schedule), c.virtual_stages,
                  c.sequence_parallel, static_cast<int>(c.recompute), c.layers_per_stage};
      auto it = groups.emplace(k, std::make_pair(0.0, 1e300)).first;
      if (!c.dp_overlap || c.dp == 1) it->second.first = std::max(it->second.first, pipeline_floor_s(e));
      it->second.second = std::min(it->second.second, e.time.step_s);
      ++siblings;
    });
    int64_t violations = 0;
    for (const auto& [k, g] : groups)
      if (g.first > g.second * (1 + 1e-12)) ++violations;
    INFO(p.model.name << ": " << groups.size() << " groups, " << siblings << " configurations");
    CHECK(violations == 0);
  }
}

TEST_CASE("pruned search equals exhaustive search under every framework's rules") {
  for (auto f : {Framework::Megatron, Framework::DeepSpeed, Framework::Fsdp, Framework::Torchtitan,
                 Framework::Nemo}) {
    Problem p = problem("llama-2-13b", "a100-40gb-sxm", 32, 128, 4096);
    p.job.framework = f;
    p.job.convention = framework_spec(f).convention;
    p.job.knobs = framework_knobs(framework_spec(f));  // what --framework sets (FSDP2 copies, loss, ...)
    INFO(to_string(f));
    SearchOptions opt;
    opt.top_k = 6;
    opt.pareto = true;
    const SearchResult r = compare(p, opt);
    for (const StepEstimate& e : r.top) CHECK(validate_framework(p, e.config, "t").empty());
  }
}
