// Issue 3 acceptance: the seeds' scenarios get sensible shapes, the planner's best is at least as
// fast as each published run, and impossible problems are diagnosed with a useful hint.
#include <catch2/catch.hpp>

#include <algorithm>

#include <cstdio>
#include <filesystem>

#include "costmodel/validate.h"
#include "planner/cp_space.h"
#include "planner/diagnose.h"
#include "planner/plan_table.h"
#include "planner/pipeline_balance.h"
#include "planner/search.h"
#include "test_search_fixtures.h"

using namespace meshplan;
using planner_test::problem;

namespace {

StepEstimate best_of(const Problem& p, const std::vector<ScheduleKind>& schedules = {}) {
  SearchOptions opt;
  opt.space.schedule = schedules;  // empty: every schedule
  const SearchResult r = search(p, opt);
  REQUIRE(!r.top.empty());
  const StepEstimate& e = r.top.front();
  std::printf("%s on %lld x %s (batch %lld x %lld): %s, step %.3f s, MFU %.3f, peak %.1f GB\n",
              p.model.name.c_str(), static_cast<long long>(p.job.gpus), p.hardware.name.c_str(),
              static_cast<long long>(p.job.global_batch), static_cast<long long>(p.job.seq_len),
              describe_config(e.config).c_str(), e.time.step_s, e.throughput.mfu,
              e.memory.peak_bytes / 1e9);
  CHECK(e.fits);
  CHECK(static_cast<int64_t>(e.config.tp) * e.config.pp * e.config.dp == p.job.gpus);
  return e;
}

}  // namespace

// Seeds: "For a 7B model on 8 A100s, I'd use ZeRO Stage 2 ... I wouldn't need Stage 3". Global batch
// 64 x 4096 tokens (0.26M tokens, Llama-2's sequence length).
TEST_CASE("7B on 8 A100-80GB: a ZeRO-sharded data-parallel plan without PP") {
  const StepEstimate e = best_of(problem("llama-2-7b", "a100-80gb-sxm", 8, 64, 4096));
  CHECK(e.config.pp == 1);
  CHECK(e.config.dp > 1);
  CHECK(e.config.zero_stage >= 1);  // 112 GB of static state cannot be replicated on 80 GB
}

// Seeds: 13B on 8 GPUs is 208 / 71.5 / 48.75 / 26 GB static per GPU for ZeRO 0/1/2/3: ZeRO-1's replicated
// weights and gradients leave no room, so the state must be split further: by ZeRO-2/3, by tensor
// parallelism or by a pipeline (DualPipeV over 2 ranks with ZeRO-1 holds 46.7 GB and is the best plan by
// 0.3 % over ZeRO-2 at DP 8, its fill and drain hidden by rank 0's embedding and LM head).
TEST_CASE("13B on 8 A100-80GB: ZeRO >= 2 or tensor or pipeline parallelism") {
  const StepEstimate e = best_of(problem("llama-2-13b", "a100-80gb-sxm", 8, 64, 4096));
  CHECK((e.config.zero_stage >= 2 || e.config.tp > 1 || e.config.pp > 1));
  const StepEstimate no_pp = best_of(problem("llama-2-13b", "a100-80gb-sxm", 8, 64, 4096),
                                     {ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1,
                                      ScheduleKind::GPipe});
  CHECK((no_pp.config.zero_stage >= 2 || no_pp.config.tp > 1));
}

// Seeds: "70B on 256 GPUs: TP within the node, PP across nodes, DP for the rest". Here 128 GPUs,
// 8 per node, global batch 1024 x 4096 tokens (Llama-2's 4M-token batch).
TEST_CASE("70B on 128 A100-80GB: TP inside a node with PP and DP as needed") {
  const Problem p = problem("llama-2-70b", "a100-80gb-sxm", 128, 1024, 4096);
  const StepEstimate e = best_of(p);
  CHECK(e.config.tp > 1);
  CHECK(e.config.tp <= p.hardware.gpus_per_node);
  CHECK(e.config.dp > 1);
}

// GPT-3 175B on 1,024 A100-80GB (128 DGX A100 nodes), global batch 2048 x 2048 tokens: the setting of
// NVIDIA's production recipe (NeMo-Framework-Launcher conf/training/gpt3/175b.yaml: 128 nodes x 8 GPUs,
// TP=4, PP=8, virtual stages 12, micro-batch 1, sequence parallel, selective recompute, distributed
// optimizer). Issue 3 expects "TP = 8 and PP > 1"; the cost model (1 % mean error on Korthikanti
// Table 5) finds TP=4 faster because with TP=8 each GPU runs twice the sequences through the same
// per-layer TP collectives, doubling exposed TP time, while interleaving hides PP=8's bubble. NVIDIA's
// tuned recipe agrees. So the test asserts the shape both share (model parallelism inside the node,
// pipeline across nodes) and that both published layouts are within a few percent of the best.
// The recipes are Megatron's, which has no DualPipeV: the best plan among the schedules it runs (with
// DualPipeV, TP 2 x PP 16 is best here, its bubble hidden behind rank 0's embedding and head: 10 % faster).
TEST_CASE("175B on 1024 A100-80GB: TP inside the node (>= 4) and PP > 1, close to published layouts") {
  const Problem p = problem("gpt3-175b", "a100-80gb-sxm", 1024, 2048, 2048);
  const StepEstimate e = best_of(p, {ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1,
                                     ScheduleKind::GPipe});
  CHECK(e.config.tp >= 4);
  CHECK(e.config.tp <= p.hardware.gpus_per_node);
  CHECK(e.config.pp > 1);
  CHECK(e.config.dp > 1);
  auto layout = [&](int tp, int pp, int v, int zero) {
    ParallelConfig c;
    c.tp = tp; c.pp = pp; c.dp = static_cast<int>(p.job.gpus / (tp * pp)); c.zero_stage = zero;
    c.micro_batch_size = 1; c.num_micro_batches = p.job.global_batch / c.dp;
    c.recompute = Recompute::Selective; c.sequence_parallel = true;
    c.schedule = ScheduleKind::Interleaved; c.virtual_stages = v;
    REQUIRE(validate_config(p, c, "test").empty());
    const StepEstimate x = estimate_step(p, c);
    std::printf("  published layout tp%d pp%d v%d zero%d: step %.3f s (%.1f %% slower than best)\n",
                tp, pp, v, zero, x.time.step_s, 100.0 * (x.time.step_s / e.time.step_s - 1.0));
    CHECK(x.fits);
    CHECK(x.time.step_s >= e.time.step_s * (1.0 - 1e-9));
    return x.time.step_s / e.time.step_s;
  };
  // NeMo's recipe. Within 3 % with materialized attention; with fused attention (the default since
  // issue 10) recompute none fits at micro-batch 2 and wins, while the recipe's selective recompute
  // re-runs the flash forward for almost no memory: 3.8 % slower.
  CHECK(layout(4, 8, 12, 1) < 1.05);
  CHECK(layout(8, 8, 3, 1) < 1.15);   // Megatron-LM (Korthikanti 2022): predicted ~11 % slower
}

namespace {
// The validation files, sorted; part k of n takes every n-th from k, so that the searches below (one
// per published run) run as n test processes.
std::vector<std::string> validation_files(int part, int parts) {
  const std::string dir = std::string(MESHPLAN_SOURCE_DIR) + "/validation";
  REQUIRE(std::filesystem::is_directory(dir));
  std::vector<std::string> files;
  for (const auto& f : std::filesystem::directory_iterator(dir))
    if (f.path().extension() == ".yaml") files.push_back(f.path().string());
  std::sort(files.begin(), files.end());
  REQUIRE(files.size() >= static_cast<size_t>(parts));
  std::vector<std::string> mine;
  for (size_t i = static_cast<size_t>(part); i < files.size(); i += static_cast<size_t>(parts)) mine.push_back(files[i]);
  return mine;
}

int check_published_runs(int part, int parts) {
  int runs = 0;
  for (const std::string& file : validation_files(part, parts)) {
    auto set = load_validation(file);
    INFO(file << ": " << (set ? "" : set.error().one_line()));
    REQUIRE(set.ok());
    auto hw = load_hardware(set->hardware, std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles");
    REQUIRE(hw.ok());
    for (const ValidationRun& run : set->runs) {
      const Problem p = run_problem(*set, run, *hw);
      const StepEstimate published = estimate_step(p, run_config(run));
      // One search finds the best and ranks the published configuration among all fitting ones
      // (search.h: the bounds keep whatever could be better than it; tests/planner/test_search.cpp
      // checks that count against the exhaustive search's).
      SearchOptions opt;
      opt.reference = published;
      const SearchResult r = search(p, opt);
      REQUIRE(!r.top.empty());
      const int64_t better = r.better_than_reference, fitting = r.fitting();
      bool in_space = false;  // the published layout is one the planner enumerates
      // One layout, compared as its effective layers per chunk plus everything else: a published split equal
      // to the default spread (Qwen3-235B's [3, 4 x 22, 3] over PP8 x VP3) is the enumerated candidate that
      // states no split, and a spread the planner states explicitly (405B's [0, 1 x 126, 0]) matches one that
      // does.
      auto without_split = [](ParallelConfig c) {
        c.layers_per_stage.clear();
        if (c.dp == 1) c.dp_overlap = true;  // no DP reduction to overlap: the planner enumerates one value
        return describe_config(c);
      };
      const std::string published_text = without_split(published.config);
      const std::vector<int> published_layers = layers_per_chunk(p.model, published.config);
      bool layout_in_space = false;  // everything but the split
      for_each_config(p, opt.space, [&](const ParallelConfig& c, Reason why, int64_t) {
        if (why != Reason::None || in_space) return;
        const bool same = without_split(c) == published_text;
        layout_in_space = layout_in_space || same;
        in_space = same && layers_per_chunk(p.model, c) == published_layers;
      });
      // The planner names three splits (even, head-balanced, Megatron's embedding-and-loss); a split a team
      // picked by hand (BigScience's 7 x 11 + 1 over 78 layers) is not one of them: its layout must be.
      ParallelConfig even = published.config;
      even.layers_per_stage.clear();
      const int v = std::max(1, published.config.virtual_stages);
      const bool named_split = published.config.layers_per_stage.empty() ||
                               published_layers == layers_per_chunk(p.model, even) ||
                               published_layers == balanced_layers_per_chunk(p, published.config.pp, v) ||
                               published_layers == embedding_loss_layers_per_chunk(p.model, published.config.pp, v);
      if (!named_split && !in_space) {
        std::printf("%s: published split is not one the planner names; its layout is %sin the space\n",
                    run.label.c_str(), layout_in_space ? "" : "NOT ");
        in_space = layout_in_space;
      }
      std::printf("%s: published %s step %.3f s (%s, rank %lld of %lld fitting); planner's best %s "
                  "step %.3f s\n",
                  run.label.c_str(), describe_config(published.config).c_str(),
                  published.time.step_s, published.fits ? "fits" : "does not fit our memory model",
                  static_cast<long long>(better + 1), static_cast<long long>(fitting),
                  describe_config(r.top[0].config).c_str(), r.top[0].time.step_s);
      INFO(run.label);
      // A published layout our memory model says does not fit cannot be the planner's pick (the line
      // above records it; e.g. llm-foundry's micro-batch 10 on A100-40GB), nor can one the search's
      // framework does not run (fms-fsdp's HSDP rows: the search here plans for meshplan's executor).
      const bool runnable = validate_framework(p, run_config(run), "").empty();
      if (published.fits && runnable) CHECK(r.top[0].time.step_s <= published.time.step_s);
      // Every published layout the planner's rules admit is in its space (uneven interleaved
      // splits included: Qwen3-235B's PP8 x VP4 over 94 layers), so the search saw it; except a CP degree
      // below the search's smallest local sequence (planner/cp_space.h: MLPerf's CP 4 of 8192 tokens).
      const std::vector<int> cps = cp_domain(p, opt.space);
      const bool cp_searched = std::find(cps.begin(), cps.end(), published.config.cp) != cps.end();
      if (classify_config(p, published.config) == Reason::None && runnable && cp_searched) CHECK(in_space);
      if (!cp_searched) CHECK(published.config.cp > 1);  // only CP is ever left out this way
      ++runs;
    }
  }
  return runs;
}
}  // namespace

TEST_CASE("the planner's best is at least as fast as every published run: part 1 of 4 (published rank printed)") {
  CHECK(check_published_runs(0, 4) >= 2);
}
TEST_CASE("the planner's best is at least as fast as every published run: part 2 of 4 (published rank printed)") {
  CHECK(check_published_runs(1, 4) >= 2);
}
TEST_CASE("the planner's best is at least as fast as every published run: part 3 of 4 (published rank printed)") {
  CHECK(check_published_runs(2, 4) >= 2);
}
TEST_CASE("the planner's best is at least as fast as every published run: part 4 of 4 (published rank printed)") {
  CHECK(check_published_runs(3, 4) >= 2);
}

TEST_CASE("impossible: the model does not fit even fully sharded -> the minimum GPU count") {
  const Problem p = problem("megatron-gpt-1t", "a100-80gb-sxm", 64, 64, 2048);
  SearchOptions opt;
  const SearchResult r = search(p, opt);
  REQUIRE(r.top.empty());
  const Error e = diagnose_no_plan(p, opt, r);
  const int64_t need = min_gpus_fully_sharded(p);
  INFO(e.one_line());
  // 1T x 16 B/param = 16 TB of state; 75.5 GB usable after the 2 GB "other" -> at least 212 GPUs.
  CHECK(need >= 212);
  CHECK(need < 400);
  CHECK(e.field == "--gpus");
  CHECK(e.hint.find(std::to_string(need)) != std::string::npos);
  // That many GPUs (rounded up to whole nodes and a batch it divides) do fit.
  const int64_t nodes = (need + 7) / 8 * 8;
  CHECK(!search(problem("megatron-gpt-1t", "a100-80gb-sxm", nodes, nodes, 2048), opt).top.empty());
}

TEST_CASE("impossible: a prime GPU count above a node leaves only tp=1 which does not fit") {
  // 13B at 32k tokens with materialized attention: one layer's attention scores (2 a s^2 bytes without
  // dropout = 86 GB at tp=1) need TP, which 13 GPUs cannot give; 16 GPUs with tp=8 fit. (Fused
  // attention keeps no scores and fits at tp=1.)
  Problem p = problem("llama-2-13b", "a100-80gb-sxm", 13, 13, 32768);
  p.job.knobs.attention = AttentionKind::Materialized;
  SearchOptions opt;
  const SearchResult r = search(p, opt);
  REQUIRE(r.top.empty());
  const Error e = diagnose_no_plan(p, opt, r);
  INFO(e.one_line());
  CHECK(e.field == "--gpus");
  CHECK(e.message.find("prime") != std::string::npos);
  CHECK(e.hint.find("16") != std::string::npos);
  Problem p16 = problem("llama-2-13b", "a100-80gb-sxm", 16, 16, 32768);
  p16.job.knobs.attention = AttentionKind::Materialized;
  CHECK(!search(p16, opt).top.empty());
}

TEST_CASE("impossible: a global batch smaller than DP") {
  const Problem p = problem("llama-2-7b", "a100-80gb-sxm", 64, 4, 4096);
  SearchOptions opt;
  opt.space.max_tp = 2;
  opt.space.max_pp = 2;  // dp >= 16 > 4 sequences
  const SearchResult r = search(p, opt);
  REQUIRE(r.top.empty());
  const Error e = diagnose_no_plan(p, opt, r);
  INFO(e.one_line());
  CHECK(e.field == "--global-batch");
  CHECK(e.message.find("smaller than") != std::string::npos);
  CHECK(e.hint.find("16") != std::string::npos);
}

TEST_CASE("impossible with the flags given: the hint names the flag value that fits") {
  // Materialized attention: its s x s scores are what recomputation saves here. (With fused attention
  // the same flags fail on micro-batch 4, and the hint names --micro-batch 1.)
  Problem p = problem("llama-2-13b", "a100-80gb-sxm", 8, 64, 4096);
  p.job.knobs.attention = AttentionKind::Materialized;
  SearchOptions opt;
  opt.space.micro_batch = {4};
  opt.space.recompute = {Recompute::None};
  opt.space.zero = {3};
  opt.space.tp = {1};
  opt.space.pp = {1};
  const SearchResult r = search(p, opt);
  REQUIRE(r.top.empty());
  const Error e = diagnose_no_plan(p, opt, r);
  INFO(e.one_line());
  CHECK(e.one_line().find('\n') == std::string::npos);
  CHECK(e.field == "--recompute");
  CHECK(e.value == "none");
  CHECK(e.hint.find("it fits with --recompute") != std::string::npos);
}

TEST_CASE("impossible: no micro-batch size given divides the batch per DP rank") {
  const Problem p = problem("llama-2-7b", "a100-80gb-sxm", 8, 64, 4096);
  SearchOptions opt;
  opt.space.micro_batch = {3, 5};
  const SearchResult r = search(p, opt);
  REQUIRE(r.top.empty());
  CHECK(r.rejected[Reason::Batch] == r.space - r.rejected[Reason::TpDividesHeads] -
                                         r.rejected[Reason::TpExceedsNode] -
                                         r.rejected[Reason::PpExceedsLayers]);
  const Error e = diagnose_no_plan(p, opt, r);
  INFO(e.one_line());
  CHECK(e.field == "--micro-batch");
  CHECK(e.value == "3,5");
}

// Issue 10: with per-layer ZeRO-3 collectives whose ring latency grows with the DP size, the 1T
// model on 16,384 H100 no longer ranks tp2 pp1 ZeRO-3 over DP 8,192 first with 0 s of exposed DP
// communication (global batch 8,192 x 2,048 tokens, 16.8M tokens as Llama 3 405B's).
TEST_CASE("1T on 16,384 H100: the best plan does not hide a DP-8192 ZeRO-3 behind 0 s of DP comm") {
  const Problem p = problem("megatron-gpt-1t", "h100-80gb-sxm", 16384, 8192, 2048);
  SearchOptions opt;
  const SearchResult r = search(p, opt);
  REQUIRE(!r.top.empty());
  const StepEstimate& e = r.top.front();
  std::printf("1T on 16384 x h100: %s, step %.3f s, dp_comm %.3f s, MFU %.3f\n", describe_config(e.config).c_str(),
              e.time.step_s, e.time.dp_comm_s, e.throughput.mfu);
  CHECK_FALSE((e.config.zero_stage == 3 && e.config.dp >= 4096 && e.time.dp_comm_s == 0.0));
  for (const StepEstimate& c : r.top)
    if (c.config.zero_stage == 3 && c.config.dp >= 2) CHECK(c.time.dp_comm_s > 0.0);
}
