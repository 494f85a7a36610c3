// The search space: domains, the fast rule check against core validate_config, and counting.
#include <catch2/catch.hpp>

#include "core/cuda_graphs.h"
#include "core/framework.h"
#include "planner/enumerate.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::problem;

TEST_CASE("divisors are sorted and complete") {
  CHECK(divisors(1) == std::vector<int64_t>{1});
  CHECK(divisors(12) == std::vector<int64_t>{1, 2, 3, 4, 6, 12});
  CHECK(divisors(49) == std::vector<int64_t>{1, 7, 49});
  CHECK(divisors(3072).size() == 22);  // 2^10 * 3
}

TEST_CASE("classify_config agrees with validate_config on every configuration of a space") {
  // GQA (kv heads 8), 22 layers over 12 GPUs: uneven stages, tp that breaks heads, batch breaks.
  Problem p = problem("tinyllama-1.1b", "a100-40gb-sxm", 12, 36, 2048);
  SearchSpace s;
  s.tp = {1, 2, 3, 4, 6, 12, 5};
  s.micro_batch = {1, 2, 3, 4, 5};
  s.virtual_stages = {1, 2, 3, 11};
  s.sequence_parallel = {0, 1};
  int64_t checked = 0, valid = 0;
  for_each_config(p, s, [&](const ParallelConfig& c, Reason r, int64_t n) {
    ++checked;
    if (c.dp == 0) {  // the layout stands for itself: tp*pp does not divide the GPUs
      CHECK(r == Reason::GpusDivisible);
      return;
    }
    const ErrorList errors = validate_config(p, c, "test");
    INFO("tp=" << c.tp << " pp=" << c.pp << " mb=" << c.micro_batch_size << " M="
               << c.num_micro_batches << " schedule=" << to_string(c.schedule) << " v="
               << c.virtual_stages << " sp=" << c.sequence_parallel << " reason=" << reason_name(r)
               << " first error=" << (errors.empty() ? "" : errors.front().one_line()));
    CHECK((r == Reason::None) == errors.empty());
    if (r == Reason::None) ++valid;
  });
  CHECK(checked > 1000);
  CHECK(valid > 100);
}

TEST_CASE("the default domains follow the rules of the issue") {
  Problem p = problem("llama-2-70b", "a100-80gb-sxm", 128, 1024, 4096);
  SearchSpace s;
  CHECK(tp_domain(p, s) == std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128});
  const LayoutDims d = layout_dims(p, s, 8, 4);
  CHECK(d.dp == 4);
  CHECK(d.micro_batches == std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64, 128, 256});
  CHECK(d.zeros == std::vector<int>{0, 1, 2, 3});
  CHECK(d.sequence_parallel == std::vector<int>{1, 0});
  CHECK(d.recomputes.size() == 3);
  CHECK((d.recomputes.front() == Recompute::Full));  // least activation memory first
  CHECK(d.dp_overlaps == std::vector<int>{1, 0});
  // 80 layers / 4 stages = 20 per stage: interleaved v in {2, 4, 5, 10, 20} plus 1F1B, ZB-H1, GPipe, DualPipeV.
  CHECK(d.schedules.size() == 4 + 5);
  // tp=1: no sequence parallelism; pp=1: one schedule; dp=1: no overlap choice.
  const LayoutDims one = layout_dims(p, s, 1, 128);
  CHECK(one.sequence_parallel == std::vector<int>{0});
  CHECK(one.dp_overlaps == std::vector<int>{1});
  CHECK(layout_dims(p, s, 8, 1).schedules.size() == 1);
  CHECK(check_layout(p, 16, 1) == Reason::TpDividesHeads);  // 8 key/value heads
  CHECK(check_layout(p, 1, 128) == Reason::PpExceedsLayers);  // 80 layers
  Problem g = problem("megatron-gpt-22b", "a100-80gb-sxm", 128, 1024, 2048);  // 64 heads
  CHECK(check_layout(g, 16, 1) == Reason::TpExceedsNode);
  CHECK(check_layout(g, 128, 1) == Reason::TpDividesHeads);
  CHECK(check_layout(g, 3, 1) == Reason::GpusDivisible);
  Problem h = problem("gpt3-175b", "a100-80gb-sxm", 96, 96, 2048);  // 96 heads, 8 GPUs per node
  CHECK(check_layout(h, 6, 1) == Reason::TpExceedsNode);  // groups of 6 would straddle nodes
  CHECK(!validate_config(h, [] { ParallelConfig c; c.tp = 6; c.dp = 16; c.micro_batch_size = 1;
                                 c.num_micro_batches = 6; return c; }(), "t").empty());
  h.job.allow_tp_across_nodes = true;
  CHECK(check_layout(h, 6, 1) == Reason::None);
  g.job.allow_tp_across_nodes = true;
  CHECK(check_layout(g, 16, 1) == Reason::None);
}

TEST_CASE("flags narrow the domains and --max-tp caps") {
  Problem p = problem("llama-2-70b", "a100-80gb-sxm", 128, 1024, 4096);
  SearchSpace s;
  s.max_tp = 4;
  s.max_pp = 2;
  s.zero = {1, 2};
  s.schedule = {ScheduleKind::Interleaved};
  s.virtual_stages = {2};
  CHECK(tp_domain(p, s) == std::vector<int>{1, 2, 4});
  CHECK(pp_domain(p, s, 4) == std::vector<int>{1, 2});
  const LayoutDims d = layout_dims(p, s, 4, 2);
  CHECK(d.zeros == std::vector<int>{1, 2});
  REQUIRE(d.schedules.size() == 1);
  CHECK(d.schedules[0].virtual_stages == 2);
}

TEST_CASE("the space count equals what the enumerator visits") {
  Problem p = problem("llama-2-13b", "a100-80gb-sxm", 24, 96, 4096);
  SearchSpace s;
  s.tp = {1, 2, 4, 8, 5};
  int64_t visited = 0;
  for_each_config(p, s, [&](const ParallelConfig&, Reason, int64_t n) { visited += n; });
  CHECK(visited == count_space(p, s));
}

TEST_CASE("per-layer CUDA graph scopes keep full recompute out of the space - full_iteration keeps it") {
  Problem p = problem("llama-2-70b", "a100-80gb-sxm", 128, 1024, 4096);
  p.job.framework = Framework::Megatron;
  SearchSpace s;
  p.job.knobs.cuda_graphs = kGraphAttn | kGraphMlp;
  const LayoutDims graphed = layout_dims(p, s, 8, 4);
  CHECK(graphed.recomputes == std::vector<Recompute>{Recompute::Selective, Recompute::None});
  p.job.knobs.cuda_graphs = kGraphFullIteration;
  CHECK(layout_dims(p, s, 8, 4).recomputes.size() == 3);
  // Every configuration left passes core's rules (core/cuda_graphs.h check_cuda_graphs).
  p.job.knobs.cuda_graphs = kGraphAttn;
  s.tp = {8};
  s.pp = {4};
  int64_t valid = 0;
  for_each_config(p, s, [&](const ParallelConfig& c, Reason r, int64_t) {
    if (r != Reason::None) return;
    ++valid;
    CHECK(c.recompute != Recompute::Full);
    CHECK(validate_config(p, c, "test").empty());
  });
  CHECK(valid > 0);
}
