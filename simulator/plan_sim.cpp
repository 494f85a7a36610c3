// simulate_plan: schedule + StepCosts -> simulation -> summary and checks (plan_sim.h).
#include "simulator/plan_sim.h"

#include "simulator/cp_ring.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>

#include "core/checked.h"
#include "core/limits.h"
#include "costmodel/activations.h"
#include "costmodel/pipeline.h"
#include "simulator/engine.h"
#include "simulator/schedule_check.h"

namespace meshplan {

namespace {

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

Check bubble_check(PlanSimulation& ps, const SimOptions& o) {
  const Schedule& s = ps.schedule;
  SimInput in = uniform_sim_input(s, 1'000'000, 2'000'000);
  in.record_spans = false;
  auto r = simulate_schedule(in);
  assert(r.ok() && "the schedule already simulated once");
  ps.uniform_bubble = summarize(*r).bubble_fraction;
  ps.closed_form_bubble = bubble_fraction(s.kind, s.pp, s.virtual_stages, s.num_micro_batches);
  Check c{"bubble", std::fabs(ps.uniform_bubble - ps.closed_form_bubble) <= 1e-6, ""};
  c.detail = "equal stages, free transfers: simulated " + fmt("%.5f", ps.uniform_bubble) + " vs closed form " +
             fmt("%.5f", ps.closed_form_bubble) + " (" + to_string(s.kind) + "); this plan" +
             (o.ideal_network ? " (ideal network): " : ": ") + fmt("%.5f", ps.summary.bubble_fraction);
  if (!c.ok) c.detail += "; the schedule's order differs from the closed form's";
  return c;
}

Check memory_check(PlanSimulation& ps, const ParallelConfig& cfg) {
  const Schedule& s = ps.schedule;
  double model_max = 0, sim_max = 0;
  for (int st = 0; st < s.pp; ++st) {
    ps.model_in_flight.push_back(
        microbatches_in_flight(cfg.schedule, s.pp, s.virtual_stages, s.num_micro_batches, st));
    model_max = std::max(model_max, ps.model_in_flight.back());
    sim_max = std::max(sim_max, ps.summary.stages[st].peak_in_flight);
  }
  const StageReport& w = ps.summary.stages[ps.summary.worst_stage];
  // Stage by stage for GPipe/1F1B/interleaved. ZB-H1 keeps each stash until its W, later than the
  // cost model's count (until B) on stages > 0, so there only the largest count must agree.
  const bool split = has_weight_actions(s);
  bool per_stage = true;
  for (int st = 0; st < s.pp; ++st)
    per_stage = per_stage && std::fabs(ps.summary.stages[st].peak_in_flight - ps.model_in_flight[st]) < 1e-9;
  Check c{"activation_memory", std::fabs(sim_max - model_max) < 1e-9 && (split || per_stage), ""};
  c.detail = "worst stage " + std::to_string(w.stage) + ": " + fmt("%.4g", w.peak_activation_bytes / 1e9) +
             " GB stashed, " + fmt("%g", w.peak_in_flight) + " micro-batches in flight (cost model " +
             fmt("%g", ps.model_in_flight[w.stage]) + "); most in flight on any stage " + fmt("%g", sim_max) +
             " vs cost model " + fmt("%g", model_max);
  c.detail += split ? " (split backward, ZB-H1 and DualPipeV: stashes count until W)"
                   : (per_stage ? "; every stage matches" : "; some stage differs from the cost model");
  return c;
}

Check fits_check(const PlanSimulation& ps) {
  const MemoryBreakdown& m = ps.estimate.memory;
  return Check{"fits", ps.estimate.fits,
               "cost model peak " + fmt("%.4g", m.peak_bytes / 1e9) + " GB on stage " + std::to_string(m.worst_stage) +
                   " of " + fmt("%.4g", ps.estimate.usable_memory_bytes / 1e9) + " GB usable" +
                   (ps.estimate.fits ? "" : ": this plan does not fit; the timeline is what it would do")};
}

}  // namespace

Check compare_with_estimate(const PlanSimulation& ps, const ParallelConfig& cfg, double tolerance) {
  const TimeBreakdown& e = ps.estimate.time;
  const Breakdown& b = ps.summary.critical;
  const double sim = ps.summary.step_s, est = e.step_s;
  const double err = est > 0 ? (sim - est) / est : 0.0;
  Check c{"estimate", std::fabs(err) <= tolerance, ""};
  c.detail = "simulated " + fmt("%.6g", sim) + " s vs estimate " + fmt("%.6g", est) + " s (" +
             fmt("%+.2f", 100 * err) + " %)";
  if (c.ok) return c;
  struct Term { const char* name; double sim, est; };
  const Term terms[] = {{"compute_s", b.compute_s, e.compute_s},
                        {"tp_comm_s", b.tp_comm_s, e.tp_comm_s},
                        {"pp_bubble_s", b.bubble_s, e.pp_bubble_s},
                        {"pp_comm_s", b.pp_comm_s, e.pp_comm_s},
                        {"dp_comm_s", b.dp_comm_s + b.zero3_gather_s, e.dp_comm_s},
                        {"optimizer_s", b.optimizer_s, e.optimizer_s}};
  const Term* worst = &terms[0];
  for (const Term& t : terms)
    if (std::fabs(t.sim - t.est) > std::fabs(worst->sim - worst->est)) worst = &t;
  const std::string name = worst->name;
  std::string why;
  if (name == "pp_comm_s") {
    why = "the closed form puts all 2(vM+P-1) transfers of " + fmt("%.3g", ps.costs.p2p_s * 1e3) +
          " ms on the critical path; the simulation exposes only those the receiving rank waits for";
  } else if (name == "dp_comm_s" && cfg.zero_stage >= 3 && worst->sim < worst->est) {
    const ChunkCosts& k = ps.costs.chunks[0];
    why = "ZeRO-3 collectives: the closed form exposes each pass's first all-gather and last reduce-scatter "
          "of every micro-batch and, per layer, what its gather and reduce-scatter (" +
          fmt("%.3g", 1e3 * k.zero3_gather_s / std::max(1, k.layers)) + " ms gather) exceed its compute by; the "
          "simulation prefetches a pass's first gather behind the previous pass and lets the reduce-scatters "
          "run on under the following passes";
  } else if (name == "dp_comm_s" && b.zero3_gather_s > b.dp_comm_s) {
    const ChunkCosts& k = ps.costs.chunks[0];
    why = "ZeRO-3 all-gathers: the closed form hides each pass's gather behind the whole stage pass; the "
          "simulation gathers layer by layer one layer ahead, so a layer gather (" +
          fmt("%.3g", 1e3 * k.zero3_gather_s / std::max(1, k.layers)) + " ms) longer than that layer's compute (" +
          fmt("%.3g", 1e3 * k.backward_input_s / std::max(1, k.layers)) + " ms input-grad backward) stays exposed" +
          (has_weight_actions(ps.schedule) ? ", and ZB-H1's B has no weight-gradient work to hide it" : "");
  } else if (name == "dp_comm_s" && cfg.zero_stage >= 2) {
    why = "per-micro-batch reduce-scatters (ZeRO-" + std::to_string(cfg.zero_stage) +
          "): the closed form exposes whatever does not fit inside that micro-batch's backward; the simulation "
          "queues them on the DP stream, where they keep running under the following forwards and backwards "
          "(it assumes bucket memory for the backlog)";
  } else if (name == "dp_comm_s") {
    why = "the closed form hides the reduction behind one micro-batch's whole stage backward; the simulation "
          "reduces per-layer buckets as the chunk's last backward produces them, so the last bucket and any "
          "excess stay exposed";
  } else if (name == "pp_bubble_s" || name == "compute_s") {
    double lo = 1e300, hi = 0;
    for (int st = 0; st < ps.schedule.pp; ++st) {
      double t = 0;
      for (int c = st; c < static_cast<int>(ps.costs.chunks.size()); c += ps.schedule.pp)
        t += ps.costs.chunks[c].forward_s + ps.costs.chunks[c].backward_input_s + ps.costs.chunks[c].backward_weight_s;
      lo = std::min(lo, t);
      hi = std::max(hi, t);
    }
    why = "stages are uneven (" + fmt("%.4g", lo * 1e3) + " to " + fmt("%.4g", hi * 1e3) +
          " ms per micro-batch: embedding, LM head, layer split" +
          (cfg.zero_stage >= 3 ? ", ZeRO-3 gather waits" : "") +
          "); the closed form adds every other stage's time once to M x the slowest stage, the simulated "
          "critical path (" + lane_name(ps.result, ps.summary.critical_lane) + ") overlaps or extends part of it";
  } else {
    why = "per-rank values differ from the closed form's worst stage";
  }
  c.detail += "; largest difference " + name + ": simulated " + fmt("%.6g", worst->sim) + " s vs " +
              fmt("%.6g", worst->est) + " s: " + why;
  return c;
}

static Result<PlanSimulation> run_checks(PlanSimulation ps, const SimInput& in, const SimOptions& o,
                                         const std::string& file) {
  auto r = simulate_schedule(in, file);
  if (!r) return r.error();
  ps.result = std::move(*r);
  ps.summary = summarize(ps.result);
  ps.checks.push_back(Check{"schedule", true,
                            "every micro-batch's F and B" + std::string(has_weight_actions(ps.schedule) ? " and W" : "") +
                                " exactly once per chunk; every receive matched by a send"});
  ps.checks.push_back(Check{"deadlock", true,
                            "all " + std::to_string(ps.result.lanes.size()) + " simulated ranks finished (" +
                                std::to_string(ps.result.events) + " events)"});
  if (in.record_spans) ps.checks.push_back(verify_order(ps.schedule, ps.result));
  ps.checks.push_back(bubble_check(ps, o));
  return ps;
}

// The event simulation holds every (rank, chunk, micro-batch) pass: refuse shapes above the bound.
static Result<bool> check_size(int64_t pp, int64_t v, int64_t m, const std::string& file, const char* field) {
  if (product_within({pp, v, m}, limits::kMaxSimulatedPasses)) return true;
  return make_error(file, field, "pp*v*M=" + std::to_string(pp) + "*" + std::to_string(v) + "*" + std::to_string(m),
                    "is too large to simulate (accepted 1.." + std::to_string(limits::kMaxSimulatedPasses) +
                        " micro-batch passes)",
                    "simulate fewer micro-batches: a larger --micro-batch or a smaller --global-batch");
}

static Result<Schedule> plan_schedule(const ParallelConfig& cfg, const Schedule* custom, const std::string& file) {
  const int v = std::max(1, cfg.virtual_stages);
  if (auto ok = check_size(cfg.pp, v, cfg.num_micro_batches, "command line", "--global-batch"); !ok)
    return ok.error();
  const int m = static_cast<int>(cfg.num_micro_batches);
  if (!custom) return build_schedule(cfg.schedule, cfg.pp, v, m);
  auto shape = [&](const char* field, int have, int want) -> Result<bool> {
    if (have == want) return true;
    return make_error(file, field, std::to_string(have),
                      "the schedule file has " + std::string(field) + "=" + std::to_string(have) +
                          " but the plan has " + std::to_string(want),
                      "write the schedule for the plan's shape or change the plan");
  };
  auto ok = shape("pp", custom->pp, cfg.pp);
  if (ok) ok = shape("virtual_stages", custom->virtual_stages, v);
  if (ok) ok = shape("micro_batches", custom->num_micro_batches, m);
  if (!ok) return ok.error();
  return lacks_communication(*custom) ? add_communication(*custom) : *custom;
}

Result<PlanSimulation> simulate_plan(const Problem& p, const ParallelConfig& cfg, const SimOptions& o,
                                     const Schedule* custom, const std::string& schedule_file) {
  auto opts = check_sim_options(cfg, o);
  if (!opts) return opts.error();
  auto sched = plan_schedule(cfg, custom, schedule_file);
  if (!sched) return sched.error();
  PlanSimulation ps;
  ps.custom_schedule = custom != nullptr;
  ps.schedule = std::move(*sched);
  ps.costs = step_costs(p, cfg);
  ps.estimate = estimate_step(p, cfg);
  const SimInput in = make_sim_input(p, cfg, ps.schedule, ps.costs, o);
  auto done = run_checks(std::move(ps), in, o, schedule_file);
  if (!done) return done;
  PlanSimulation& out = done.value();
  out.checks.push_back(memory_check(out, cfg));
  out.checks.push_back(fits_check(out));
  out.checks.push_back(compare_with_estimate(out, cfg));
  if (cfg.cp > 1 && p.job.cp_comm == CpComm::P2p) out.checks.push_back(cp_ring_check(p, cfg));
  return done;
}

Result<PlanSimulation> simulate_unit_schedule(const Schedule& s, const SimOptions& o, const std::string& file) {
  // check_schedule runs inside the simulation, after the send/recv of a compute-only list are added.
  if (auto ok = check_size(s.pp, s.virtual_stages, s.num_micro_batches, file, "micro_batches"); !ok)
    return ok.error();
  PlanSimulation ps;
  ps.custom_schedule = true;
  ps.schedule = lacks_communication(s) ? add_communication(s) : s;
  SimInput in = uniform_sim_input(ps.schedule, 1'000'000, 2'000'000);
  in.record_spans = o.record_spans;
  return run_checks(std::move(ps), in, o, file);
}

}  // namespace meshplan
