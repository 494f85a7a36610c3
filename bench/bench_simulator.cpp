// Simulator benchmark: one step of the 1T model on 3,072 A100s (TP=8 PP=64 DP=6, global batch 3,072,
// micro-batch 1 -> 512 micro-batches, 1F1B) and a large synthetic pipeline; prints events, events/s
// and wall time per simulated step, with and without spans, and the plain sweep twin for contrast.
// Usage: bench_simulator [--repeat N]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include "core/io.h"
#include "simulator/durations.h"
#include "simulator/engine.h"
#include "simulator/plan_sim.h"
#include "simulator/program.h"

using namespace meshplan;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

using Runner = Result<SimResult> (*)(const SimInput&, const std::string&);

// Runs `repeat` simulations and prints the best wall time (least disturbed by other load).
void time_runs(const char* label, const SimInput& in, int repeat, Runner run) {
  double best = 1e300;
  int64_t events = 0, actions = 0;
  Nanoseconds step = 0;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run(in, "bench");
    const double s = seconds_since(t0);
    if (!r) {
      std::printf("%s: %s\n", label, r.error().one_line().c_str());
      return;
    }
    best = std::min(best, s);
    events = r->events;
    actions = r->actions;
    step = r->step_ns;
  }
  std::printf("  %-34s %9lld events %9lld actions %9.3f ms wall %8.2f M events/s  (step %.4f s)\n", label,
              static_cast<long long>(events), static_cast<long long>(actions), best * 1e3, events / best / 1e6,
              ns_to_seconds(step));
}

Result<Problem> load_1t() {
  Problem p;
  auto m = load_model(std::string(MESHPLAN_SOURCE_DIR) + "/examples/models/megatron-gpt-1t.yaml");
  if (!m) return m.error();
  auto hw = load_hardware("a100-80gb-sxm", std::string(MESHPLAN_SOURCE_DIR) + "/hardware-profiles");
  if (!hw) return hw.error();
  p.model = *m;
  p.hardware = *hw;
  p.job.gpus = 3072;
  p.job.global_batch = 3072;
  p.job.seq_len = 2048;
  return p;
}

ParallelConfig config_1t() {
  ParallelConfig c;
  c.tp = 8;
  c.pp = 64;
  c.dp = 6;
  c.zero_stage = 1;
  c.micro_batch_size = 1;
  c.num_micro_batches = 512;  // 3072 / (6 * 1)
  c.recompute = Recompute::Selective;
  c.sequence_parallel = true;
  c.schedule = ScheduleKind::OneFOneB;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 5;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::atoi(argv[++i]);
  auto p = load_1t();
  if (!p) {
    std::printf("bench_simulator: %s\n", p.error().one_line().c_str());
    return 1;
  }
  const ParallelConfig cfg = config_1t();
  auto sched = build_schedule(cfg.schedule, cfg.pp, 1, static_cast<int>(cfg.num_micro_batches));
  const StepCosts costs = step_costs(*p, cfg);
  SimOptions o;
  o.record_spans = false;
  SimInput in = make_sim_input(*p, cfg, *sched, costs, o);

  std::printf("1T on 3072 A100-80GB: tp=8 pp=64 dp=6 zero=1, 512 micro-batches, 1f1b (best of %d)\n", repeat);
  time_runs("engine, no spans", in, repeat, simulate_schedule);
  in.record_spans = true;
  time_runs("engine, spans", in, repeat, simulate_schedule);
  o.slow_ranks = {{3, 1.3}};
  SimInput straggler = make_sim_input(*p, cfg, *sched, costs, o);
  straggler.record_spans = false;
  time_runs("engine, straggler (2 replicas)", straggler, repeat, simulate_schedule);
  // The same step as if every layer were an MoE whose EP group spans both replicas: every F and B
  // joins its EP peers at the expert all-to-all (simulator/expert_join.cpp).
  SimInput moe = straggler;
  for (ChunkTimes& c : moe.chunks) c.ep_forward_ns = c.ep_backward_ns = c.tp_forward_ns / 2 + 1;
  moe.ep_group_replicas = 2;
  time_runs("engine, straggler + EP joins", moe, repeat, simulate_schedule);
  in.record_spans = false;
  time_runs("plain sweep twin", in, 1, simulate_reference);
  {
    // The event loop alone (schedule already checked and compiled into per-lane op arrays).
    const Program prog = compile_program(in);
    double best = 1e300;
    int64_t events = 0;
    for (int i = 0; i < repeat; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      auto r = simulate_program(prog, false, "bench");
      best = std::min(best, seconds_since(t0));
      events = r->events;
    }
    std::printf("  %-34s %9lld events %37.3f ms wall %8.2f M events/s\n", "event loop only (compiled)",
                static_cast<long long>(events), best * 1e3, events / best / 1e6);
  }
  {
    const auto t0 = std::chrono::steady_clock::now();
    auto ps = simulate_plan(*p, cfg, SimOptions{});
    std::printf("  %-34s %9.3f ms wall (schedule, costs, simulation with spans, checks)\n", "simulate_plan (CLI path)",
                seconds_since(t0) * 1e3);
    if (ps) std::printf("  simulated %.4f s vs estimate %.4f s\n", ps->summary.step_s, ps->estimate.time.step_s);
  }
  std::printf("synthetic 1F1B P=64, M=8192, equal stages\n");
  SimInput big = uniform_sim_input(*build_schedule(ScheduleKind::OneFOneB, 64, 1, 8192), 1'000'000, 2'000'000);
  big.p2p_ns = 50'000;
  big.record_spans = false;
  time_runs("engine, no spans", big, repeat, simulate_schedule);
  std::printf("synthetic interleaved P=16, v=4, M=1024, equal stages\n");
  SimInput inter = uniform_sim_input(*build_schedule(ScheduleKind::Interleaved, 16, 4, 1024), 250'000, 500'000);
  inter.record_spans = false;
  time_runs("engine, no spans", inter, repeat, simulate_schedule);
  return 0;
}
