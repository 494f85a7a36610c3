// Plans through the simulator: estimate agreement over a sweep, memory and bubble checks,
// trace JSON / SVG / DOT outputs, and the goodput report.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unistd.h>

#include "core/framework.h"
#include "core/io.h"
#include "costmodel/compute_time.h"
#include "costmodel/ddp_edge_bucket.h"
#include "costmodel/hsdp.h"
#include "costmodel/zero_comm.h"
#include "simulator/goodput.h"
#include "simulator/plan_sim.h"
#include "simulator/timeline_text.h"
#include "skip.h"

using namespace meshplan;

static Problem problem(const std::string& model, int64_t gpus, int64_t global_batch, const char* ext = ".yaml") {
  Problem p;
  auto m = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/examples/models/" + model + ext);
  REQUIRE(m.ok());
  auto hw = load_hardware("a100-80gb-sxm", std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles");
  REQUIRE(hw.ok());
  p.model = *m;
  p.hardware = *hw;
  p.job.gpus = gpus;
  p.job.global_batch = global_batch;
  p.job.seq_len = 2048;
  return p;
}

static ParallelConfig config(const Problem& p, int tp, int pp, int zero, ScheduleKind k, int v) {
  ParallelConfig c;
  c.tp = tp;
  c.pp = pp;
  c.dp = static_cast<int>(p.job.gpus / (tp * pp));
  c.zero_stage = zero;
  c.micro_batch_size = 1;
  c.num_micro_batches = p.job.global_batch / c.dp;
  c.schedule = k;
  c.virtual_stages = v;
  c.recompute = Recompute::Selective;
  c.sequence_parallel = tp > 1;
  return c;
}

static const Check& check_named(const PlanSimulation& ps, const std::string& name) {
  for (const Check& c : ps.checks)
    if (c.name == name) return c;
  FAIL("no check named " << name);
  return ps.checks.front();
}

TEST_CASE("estimate vs simulate over a sweep: within 3 %, or the report names the term and why") {
  int plans = 0, within = 0;
  for (const char* model : {"llama-2-7b", "megatron-gpt-22b", "megatron-gpt-175b", "llama-3-70b"})
    for (int tp : {1, 8})
      for (int pp : {1, 2, 4, 8})
        for (int zero : {0, 1, 2, 3})
          for (auto k : {ScheduleKind::GPipe, ScheduleKind::OneFOneB, ScheduleKind::Interleaved,
                         ScheduleKind::ZeroBubbleH1})
            for (int dp : {1, 4}) {
              const Problem p = problem(model, tp * pp * dp, 64 * dp);
              const ParallelConfig c = config(p, tp, pp, zero, k, k == ScheduleKind::Interleaved ? 2 : 1);
              if (!validate_config(p, c, "sweep").empty()) continue;
              SimOptions o;
              o.record_spans = false;
              auto ps = simulate_plan(p, c, o);
              REQUIRE(ps.ok());
              const Check& e = check_named(*ps, "estimate");
              INFO(model << " tp" << tp << " pp" << pp << " zero" << zero << " " << to_string(k) << " dp" << dp << ": "
                         << e.detail);
              ++plans;
              within += e.ok;
              if (!e.ok) {
                CHECK(e.detail.find("largest difference") != std::string::npos);
                CHECK(e.detail.find(": ", e.detail.find("largest difference")) != std::string::npos);
              }
              // ZeRO-0/1 plans without deep pipelines of uneven stages agree within 3 %. (ZeRO-2/3 overlap
              // rules differ on purpose: see the detail text; deep interleaving with uneven stages too, and
              // ZB-H1 at pp 8: with fused attention (the default since issue 10) a Llama-2-7B layer is
              // cheaper, so the LM-head stage stands out more (51.5 vs 59.6 ms per micro-batch) and the
              // closed form's (P-1)(T_F + T_B - T_W) fill/drain is 3.0-3.1 % above the simulated path.)
              const bool deep_uneven = pp >= 8 && (k == ScheduleKind::Interleaved || k == ScheduleKind::ZeroBubbleH1);
              if (zero <= 1 && !deep_uneven) CHECK(e.ok);
              CHECK(check_named(*ps, "bubble").ok);
              CHECK(check_named(*ps, "activation_memory").ok);
            }
  INFO(within << " of " << plans << " plans within 3 %");
  CHECK(plans > 300);
  CHECK(within >= plans * 3 / 4);
}

TEST_CASE("ZeRO-3 with full recompute: the simulator re-gathers exactly the layers the cost model re-fetches") {
  // DeepSpeed (buckets) re-fetches every recomputed layer, 1/N of them under every-N-layers; FSDP
  // (per unit) none (costmodel/zero_comm.h zero3_refetch_share).
  const AcPolicy every2{AcPolicyKind::EveryNLayers, 2};
  for (ShardGranularity g : {ShardGranularity::PerUnit, ShardGranularity::Buckets})
    for (const AcPolicy& a : {AcPolicy{}, every2}) {
      Problem p = problem("llama-2-7b", 8, 32);
      p.job.knobs.sharding.granularity = g;
      p.job.ac_policy = a;
      ParallelConfig c = config(p, 1, 2, 3, ScheduleKind::OneFOneB, 1);
      c.recompute = Recompute::Full;
      REQUIRE(validate_config(p, c, "test").empty());
      auto ps = simulate_plan(p, c, SimOptions{});
      REQUIRE(ps.ok());
      const double share = g == ShardGranularity::Buckets ? (a == every2 ? 0.5 : 1.0) : 0.0;
      REQUIRE(zero3_refetch_share(p, c) == share);
      const int layers = ps->costs.chunks[0].layers;  // 16 of llama-2-7b's 32 on rank 0
      int forward = 0, backward = 0;
      for (const Span& s : ps->result.spans) {
        if (s.lane != 0 || s.stream != Stream::Dp) continue;
        forward += s.kind == ActionKind::Forward;
        backward += s.kind == ActionKind::Backward;
      }
      INFO("granularity " << static_cast<int>(g) << " policy " << to_string(a) << ": " << check_named(*ps, "estimate").detail);
      CHECK(layers == 16);
      CHECK(forward == c.num_micro_batches * layers);
      CHECK(backward == c.num_micro_batches * static_cast<int>(layers * (1.0 + share)));
      // FSDP: simulated step within 3 % of the closed form (-1.2 % measured). DeepSpeed's buckets
      // differ on purpose (per-matrix fetches and partial prefetch are closed-form only): -16 %.
      if (g == ShardGranularity::PerUnit) CHECK(check_named(*ps, "estimate").ok);
    }
}

TEST_CASE("the 1T plan (TP=8 PP=64 DP=6, 512 micro-batches) simulates close to its estimate") {
  const Problem p = problem("megatron-gpt-1t", 3072, 3072);
  const ParallelConfig c = config(p, 8, 64, 1, ScheduleKind::OneFOneB, 1);
  auto ps = simulate_plan(p, c, SimOptions{});
  REQUIRE(ps.ok());
  CHECK(ps->schedule.num_micro_batches == 512);
  for (const Check& k : ps->checks) {
    INFO(k.name << ": " << k.detail);
    CHECK(k.ok);
  }
  CHECK(ps->summary.worst_stage == 0);  // 1F1B: stage 0 holds P micro-batches
  CHECK(ps->summary.stages[0].peak_in_flight == 64);
}

TEST_CASE("ideal network: the plan bubble is its uneven stages only, ZeRO-3 and p2p waits vanish") {
  const Problem p = problem("llama-2-7b", 32, 128);
  const ParallelConfig c = config(p, 2, 4, 3, ScheduleKind::OneFOneB, 1);
  SimOptions o;
  o.ideal_network = true;
  auto ps = simulate_plan(p, c, o);
  REQUIRE(ps.ok());
  CHECK(ps->summary.critical.pp_comm_s == 0);
  CHECK(ps->summary.critical.dp_comm_s == 0);
  CHECK(ps->summary.critical.zero3_gather_s == 0);
  CHECK(ps->summary.critical.tp_comm_s == 0);
  SimOptions real;
  auto with_net = simulate_plan(p, c, real);
  REQUIRE(with_net.ok());
  CHECK(with_net->summary.step_s > ps->summary.step_s);
}

TEST_CASE("slow link between two stages lengthens the step") {
  const Problem p = problem("llama-2-7b", 8, 32);
  const ParallelConfig c = config(p, 1, 4, 0, ScheduleKind::OneFOneB, 1);
  auto base = simulate_plan(p, c, SimOptions{});
  SimOptions o;
  o.slow_links = {{1, 50.0}};
  auto slow = simulate_plan(p, c, o);
  REQUIRE(base.ok());
  REQUIRE(slow.ok());
  CHECK(slow->result.replicas == 2);  // dp = 2: the slowed replica and a normal one
  CHECK(slow->summary.step_s > base->summary.step_s);
  o.slow_links = {{7, 2.0}};
  auto bad = simulate_plan(p, c, o);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "--slow-link");
}

static PlanSimulation small_plan() {
  const Problem p = problem("llama-2-7b", 8, 16);
  const ParallelConfig c = config(p, 1, 4, 1, ScheduleKind::OneFOneB, 1);
  auto ps = simulate_plan(p, c, SimOptions{});
  REQUIRE(ps.ok());
  return *ps;
}

TEST_CASE("trace JSON is valid trace-event JSON: processes per rank, threads per stream, X events") {
  const PlanSimulation ps = small_plan();
  const std::string text = trace_json(ps.result, "test");
  CHECK(text == trace_json(ps.result, "test"));  // deterministic
  const auto j = nlohmann::json::parse(text);   // throws (fails the test) when invalid
  REQUIRE(j.contains("traceEvents"));
  REQUIRE(j["traceEvents"].is_array());
  std::set<int> named_pids, used_pids;
  std::set<std::pair<int, int>> named_threads, used_threads;
  int complete = 0;
  std::vector<double> peak_gb(ps.result.lanes.size(), 0.0);
  for (const auto& e : j["traceEvents"]) {
    REQUIRE(e.contains("name"));
    REQUIRE(e.contains("ph"));
    const std::string ph = e["ph"];
    if (ph == "M") {
      REQUIRE(e["args"].contains("name") == (e["name"] != "process_sort_index"));
      if (e["name"] == "process_name") named_pids.insert(e["pid"].get<int>());
      if (e["name"] == "thread_name") named_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    } else if (ph == "X") {
      ++complete;
      REQUIRE(e["ts"].is_number());
      REQUIRE(e["dur"].is_number());
      CHECK(e["ts"].get<double>() >= 0);
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e["ts"].get<double>() + e["dur"].get<double>() <= ps.summary.step_s * 1e6 + 1e-3);
      used_pids.insert(e["pid"].get<int>());
      used_threads.insert({e["pid"].get<int>(), e["tid"].get<int>()});
    } else if (ph == "C") {
      double& p = peak_gb[e["pid"].get<int>()];
      p = std::max(p, e["args"]["stashed"].get<double>());
    }
  }
  CHECK(complete == static_cast<int>(ps.result.spans.size()));
  CHECK(used_pids.size() == 4);
  for (int pid : used_pids) CHECK(named_pids.count(pid) == 1);
  for (const auto& t : used_threads) CHECK(named_threads.count(t) == 1);
  // The memory counter track peaks where the engine's stash accounting does.
  for (size_t l = 0; l < peak_gb.size(); ++l)
    CHECK(peak_gb[l] == Approx(ps.result.lanes[l].peak_activation_bytes / 1e9).margin(1e-6));
}

static int run_python(const std::string& script, const std::string& arg) {
  const std::string py = MESHPLAN_PYTHON;
  if (py.empty() || access(py.c_str(), X_OK) != 0) meshplan_test::skip("python3 not found");
  const std::string cmd = py + " -c '" + script + "' " + arg;
  return std::system(cmd.c_str());
}

TEST_CASE("Gantt SVG is well-formed XML with a row per rank, bars, legend and axis") {
  const PlanSimulation ps = small_plan();
  const std::string svg = gantt_svg(ps.result, "1F1B <P=4> & M=8");
  CHECK(svg.find("<svg") != std::string::npos);
  CHECK(svg.find("rank 3") != std::string::npos);
  CHECK(svg.find("time (ms)") != std::string::npos);
  CHECK(svg.find("forward F") != std::string::npos);
  CHECK(svg.find("&lt;P=4&gt; &amp;") != std::string::npos);
  const std::string path = "/tmp/meshplan-test-gantt-" + std::to_string(getpid()) + ".svg";
  std::ofstream(path) << svg;
  CHECK(run_python("import sys, xml.etree.ElementTree as E; r = E.parse(sys.argv[1]).getroot(); "
                   "sys.exit(0 if r.tag.endswith(\"svg\") and len(r.findall(\".//{http://www.w3.org/2000/svg}rect\")) > 64 else 1)",
                   path) == 0);
  std::remove(path.c_str());
}

TEST_CASE("DOT graph: one cluster per rank, an edge per send/receive pair") {
  auto s = build_schedule(ScheduleKind::OneFOneB, 4, 1, 8);
  REQUIRE(s.ok());
  const std::string dot = schedule_dot(*s);
  CHECK(dot.rfind("digraph schedule {", 0) == 0);
  int clusters = 0, cross = 0;
  for (size_t i = dot.find("subgraph cluster_"); i != std::string::npos; i = dot.find("subgraph cluster_", i + 1)) ++clusters;
  for (size_t i = dot.find("constraint=false"); i != std::string::npos; i = dot.find("constraint=false", i + 1)) ++cross;
  CHECK(clusters == 4);
  CHECK(cross == 2 * 3 * 8);
  CHECK(schedule_dot_nodes(*s) == 4 * 16 + 2 * 2 * 3 * 8 + 4 * 2);  // F+B, send+recv per boundary, R+O
}

TEST_CASE("goodput: Young/Daly interval for a stated failure rate") {
  // 3,072 GPUs with a per-GPU MTBF of 50,000 h: job MTBF = 50,000 * 3,600 / 3,072 = 58,593.75 s.
  // Checkpoint 60 s: Young sqrt(2 * 60 * 58,593.75) = 2,651.65 s (44.2 min).
  GoodputInput in;
  in.gpus = 3072;
  in.gpu_mtbf_hours = 50000;
  in.checkpoint_s = 60;
  in.restart_s = 300;
  in.interval_s = 15 * 60;
  in.step_s = 70.9;
  auto g = goodput(in);
  REQUIRE(g.ok());
  CHECK(g->job_mtbf_s == Approx(58593.75));
  CHECK(g->young_interval_s == Approx(2651.650).epsilon(1e-6));
  // Daly: sqrt(2CM) [1 + sqrt(C/2M)/3 + (C/2M)/9] - C with C/2M = 5.12e-4.
  CHECK(g->daly_interval_s == Approx(2651.650 * (1 + std::sqrt(5.12e-4) / 3 + 5.12e-4 / 9) - 60).epsilon(1e-6));
  CHECK(g->failures_per_day == Approx(86400 / 58593.75));
  CHECK(g->steps_per_interval == Approx(900 / 70.9));
  // Daly's interval (nearly) maximises his expected goodput: a scan finds the peak within 1 %.
  double best_tau = 0, best = 0;
  for (double tau = 600; tau <= 6000; tau += 1) {
    const double v = daly_goodput(tau, 60, 300, g->job_mtbf_s);
    if (v > best) best = v, best_tau = tau;
  }
  CHECK(best_tau == Approx(g->daly_interval_s).epsilon(0.01));
  CHECK(g->goodput_at_daly >= g->goodput_at_interval);
  // Every 15 min costs 60/900 = 6.7 % in checkpoints: goodput about 1 - C/tau - (tau/2 + R)/M.
  CHECK(g->goodput_at_interval == Approx(g->first_order_at_interval).epsilon(0.01));
  CHECK(g->goodput_at_interval < g->goodput_at_daly);
  in.checkpoint_s = 0;
  CHECK_FALSE(goodput(in).ok());
}

TEST_CASE("FSDP2 under a pipeline (torchtitan): gathers only in micro-batch 0's forward, simulated as estimated") {
  Problem p = problem("llama-2-7b", 32, 64);
  p.job.knobs = framework_knobs(framework_spec(Framework::Torchtitan));
  p.job.convention = ParamConvention::Megatron;
  for (int zero : {2, 3}) {
    ParallelConfig c = config(p, 2, 2, zero, ScheduleKind::OneFOneB, 1);
    c.sequence_parallel = true;
    REQUIRE(validate_config(p, c, "test").empty());
    auto ps = simulate_plan(p, c, SimOptions{});
    REQUIRE(ps.ok());
    const int layers = ps->costs.chunks[0].layers;
    int forward = 0, backward = 0, reduce = 0;
    for (const Span& s : ps->result.spans) {
      if (s.lane != 0 || s.stream != Stream::Dp) continue;
      forward += s.kind == ActionKind::Forward;
      backward += s.kind == ActionKind::Backward;
      reduce += s.kind == ActionKind::ReduceGrads;
    }
    INFO("zero " << zero << ": " << check_named(*ps, "estimate").detail);
    CHECK(forward == layers);  // one gather per layer per step, not per micro-batch
    CHECK(backward == 0);
    CHECK(reduce == layers);   // the step's reduce-scatter, once
    CHECK(check_named(*ps, "estimate").ok);
  }
}

TEST_CASE("ZeRO-3 over routed experts (torchtitan FSDP2 + EP): simulated as estimated and the gathers grow with edp") {
  // Qwen3-30B-A3B on one node of 8 GPUs, FSDP 8, EP 2 -> the 64 local experts of each MoE layer
  // sharded 4 ways over NVLink (pp 2: FSDP 4, EP 2, edp 2).
  auto step = [](int ep, bool titan, int pp) {
    Problem p = problem("qwen3-30b-a3b", 8, 32, ".json");
    if (titan) p.job.knobs = framework_knobs(framework_spec(Framework::Torchtitan));
    ParallelConfig c = config(p, 1, pp, 3, ScheduleKind::OneFOneB, 1);
    c.ep = ep;
    REQUIRE(validate_config(p, c, "test").empty());
    auto ps = simulate_plan(p, c, SimOptions{});
    REQUIRE(ps.ok());
    INFO("ep " << ep << " pp " << pp << ": " << check_named(*ps, "estimate").detail);
    CHECK(check_named(*ps, "estimate").ok);
    return ps->costs.chunks[0].zero3_gather_s;
  };
  for (int pp : {1, 2}) {
    const double sharded = step(2, true, pp), whole = step(8 / pp, true, pp);  // edp 4 (2) vs edp 1
    CHECK(sharded > whole);
  }
  step(4, false, 1);
}

TEST_CASE("overlapped parameter gather: the simulated step drops by what the estimate drops") {
  Problem off = problem("llama-2-7b", 32, 128);
  const ParallelConfig c = config(off, 2, 2, 1, ScheduleKind::OneFOneB, 1);  // ZeRO 1 over DP 8
  Problem on = off;
  on.job.knobs.param_gather_overlap = true;
  auto a = simulate_plan(off, c, SimOptions{});
  auto b = simulate_plan(on, c, SimOptions{});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const double est = a->estimate.time.step_s - b->estimate.time.step_s;
  const double sim = a->summary.step_s - b->summary.step_s;
  INFO("estimate drops " << est << " s, simulation " << sim << " s");
  CHECK(est > 0);
  // The simulator takes the whole gather off the step's end; the closed form also charges the
  // compute it now overlaps kOverlapComputeSlowdown of it, as every hidden collective.
  CHECK(est == Approx(sim * (1.0 - kOverlapComputeSlowdown)).epsilon(0.01));
  CHECK(check_named(*b, "estimate").ok);
}

TEST_CASE("the edge bucket's gather stays at the simulated step's end as the estimate keeps it") {
  // Megatron-Core DDP, one micro-batch per rank: the first stage's embedding bucket group is gathered
  // before its first forward (costmodel/ddp_edge_bucket.h), in the closed form and the simulator alike,
  // and the optimizer step zeroes the whole gradient buffer. (The simulator reduces a chunk's gradients
  // after its last backward, so the edge reduce-scatter was exposed there already.)
  Problem p = problem("llama-2-7b", 32, 128);
  p.job.knobs.param_gather_overlap = true;
  ParallelConfig c = config(p, 2, 1, 1, ScheduleKind::OneFOneB, 1);  // ZeRO 1 over DP 16
  c.micro_batch_size = 8;  // one micro-batch of 8 per rank: long enough to hide all but the edge
  c.num_micro_batches = 1;
  Problem m = p;
  m.job.knobs.megatron_core_model_code = true;
  auto a = simulate_plan(p, c, SimOptions{});
  auto b = simulate_plan(m, c, SimOptions{});
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  const EdgeExposure edge = edge_bucket_exposure(m, c, zero_shard_group(m.hardware, c));
  REQUIRE(edge.gather_s > 0);
  const double optimizer = b->costs.optimizer_s - a->costs.optimizer_s;  // the whole buffer's zeroing
  CHECK(optimizer > 0);
  const double sim = b->summary.step_s - a->summary.step_s;
  const double est = b->estimate.time.step_s - a->estimate.time.step_s;
  INFO("simulated step +" << sim << " s, estimate +" << est << " s; edge gather " << edge.gather_s << " s, reduce "
                          << edge.reduce_s << " s, optimizer +" << optimizer << " s");
  CHECK(sim == Approx(edge.gather_s + optimizer).epsilon(0.01));
  // The estimate exposes the edge reduce-scatter too, and what is exposed no longer slows the compute.
  const double edges = edge.gather_s + edge.reduce_s;
  CHECK(est == Approx(edges * (1.0 - kOverlapComputeSlowdown) + optimizer).epsilon(0.01));
}

TEST_CASE("FSDP1 prefetch settings: the simulated step follows the estimate and the gather waits grow as it says") {
  // llama-2-7b, ZeRO-3 over 8 GPUs, micro-batch 1: gathers long enough against a layer's compute
  // that each setting's exposed share shows.
  Problem p = problem("llama-2-7b", 8, 16);
  p.job.framework = Framework::Fsdp;
  p.job.knobs = framework_knobs(framework_spec(Framework::Fsdp));
  const ParallelConfig c = config(p, 1, 1, 3, ScheduleKind::OneFOneB, 1);
  REQUIRE(validate_config(p, c, "test").empty());
  double last_step = 0, last_wait = 0;
  // From most to least overlap: forward prefetch + PRE, PRE, POST, none.
  const std::pair<bool, BackwardPrefetch> order[] = {{true, BackwardPrefetch::Pre},
                                                     {false, BackwardPrefetch::Pre},
                                                     {false, BackwardPrefetch::Post},
                                                     {false, BackwardPrefetch::None}};
  for (const auto& [forward, backward] : order) {
    p.job.knobs.sharding.forward_prefetch = forward;
    p.job.knobs.sharding.backward_prefetch = backward;
    auto ps = simulate_plan(p, c, SimOptions{});
    REQUIRE(ps.ok());
    const Check& est = check_named(*ps, "estimate");
    INFO("forward_prefetch " << forward << " backward " << to_string(backward) << ": " << est.detail);
    CHECK(est.ok);  // within the estimate check's tolerance of the closed form
    const double step = ps->summary.step_s;
    const double wait = ps->summary.critical.zero3_gather_s;
    CHECK(step >= last_step);
    CHECK(wait >= last_wait);
    last_step = step;
    last_wait = wait;
  }
  // With every collective exposed, the gathers wait for the whole of every layer's gather.
  CHECK(last_wait > 0.0);
}

TEST_CASE("HSDP: the simulated step follows the estimate, plain FULL_SHARD and hybrid alike") {
  // llama-2-7b on 64 GPUs (8 nodes): ZeRO-3 over all 64 ranks, and within groups of 8 and 16 with the
  // gradient shards all-reduced across the groups (costmodel/hsdp.h), at the profile's 25 GB/s per GPU
  // and at 2 GB/s, where the replica all-reduce outlasts the reduce-scatter it pipelines behind.
  for (double inter_gb_per_s : {25.0, 2.0}) {
    Problem p = problem("llama-2-7b", 64, 128);
    p.job.framework = Framework::Fsdp;
    p.job.knobs = framework_knobs(framework_spec(Framework::Fsdp));
    p.hardware.inter_node.bandwidth_bytes_per_s = inter_gb_per_s * 1e9;
    double plain_err = 0;
    for (int shard_group : {0, 8, 16}) {
      ParallelConfig c = config(p, 1, 1, 3, ScheduleKind::OneFOneB, 1);
      c.recompute = Recompute::None;  // FSDP runs none or full
      c.shard_group = shard_group;
      REQUIRE(validate_config(p, c, "test").empty());
      REQUIRE(validate_framework(p, c, "test").empty());
      auto ps = simulate_plan(p, c, SimOptions{});
      REQUIRE(ps.ok());
      const Check& est = check_named(*ps, "estimate");
      INFO(inter_gb_per_s << " GB/s, shard group " << shard_group << ": " << est.detail);
      const double err = (ps->summary.step_s - ps->estimate.time.step_s) / ps->estimate.time.step_s;
      if (shard_group == 0) plain_err = err;
      // At 25 GB/s plain FULL_SHARD itself lands 3.2 % under the closed form (its FSDP2 copies and
      // per-layer gathers, named in the check's detail); HSDP must agree as closely as plain does.
      CHECK(std::fabs(err) <= 0.035);
      CHECK(std::fabs(err - plain_err) <= 0.01);
      if (inter_gb_per_s < 10) CHECK(est.ok);
    }
  }
}

TEST_CASE("DualPipeV plans simulate as estimated with every check passing and the LM head on rank 0") {
  for (const char* model : {"llama-2-7b", "megatron-gpt-22b", "llama-3-70b"})
    for (int pp : {2, 4, 8})
      for (int zero : {0, 1}) {
        const Problem p = problem(model, pp * 8, 128);
        ParallelConfig c = config(p, 8, pp, zero, ScheduleKind::DualPipeV, 2);
        if (!validate_config(p, c, "dualpipev").empty()) continue;
        SimOptions o;
        o.record_spans = true;
        auto ps = simulate_plan(p, c, o);
        REQUIRE(ps.ok());
        INFO(model << " pp" << pp << " zero" << zero << ": " << check_named(*ps, "estimate").detail);
        for (const char* name : {"schedule", "deadlock", "order", "bubble", "activation_memory", "estimate"})
          CHECK(check_named(*ps, name).ok);
        CHECK(ps->summary.worst_stage == 0);  // the V's ends (embedding, LM head) share rank 0
      }
}
