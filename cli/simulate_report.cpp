// simulate_json / simulate_table: the simulate report in JSON (nlohmann, ordered) and as text.
#include "cli/simulate_report.h"

#include <cstdio>
#include <string>

#include "cli/report.h"
#include "cli/report_json.h"

namespace meshplan::cli {

namespace {

ojson breakdown_object(const Breakdown& b) {
  return {{"compute_s", report_number(b.compute_s)},       {"tp_comm_s", report_number(b.tp_comm_s)},
          {"pp_bubble_s", report_number(b.bubble_s)},      {"pp_comm_s", report_number(b.pp_comm_s)},
          {"dp_comm_s", report_number(b.dp_comm_s)},       {"zero3_gather_s", report_number(b.zero3_gather_s)},
          {"optimizer_s", report_number(b.optimizer_s)}};
}

ojson goodput_object(const GoodputInput& in, const GoodputReport& g) {
  return {{"gpus", report_number(in.gpus)},
          {"gpu_mtbf_hours", report_number(in.gpu_mtbf_hours)},
          {"checkpoint_s", report_number(in.checkpoint_s)},
          {"restart_s", report_number(in.restart_s)},
          {"job_mtbf_s", report_number(g.job_mtbf_s)},
          {"failures_per_day", report_number(g.failures_per_day)},
          {"young_interval_s", report_number(g.young_interval_s)},
          {"daly_interval_s", report_number(g.daly_interval_s)},
          {"goodput_at_daly", report_number(g.goodput_at_daly)},
          {"interval_s", report_number(in.interval_s)},
          {"goodput_at_interval", report_number(g.goodput_at_interval)},
          {"first_order_goodput_at_interval", report_number(g.first_order_at_interval)},
          {"steps_per_interval", report_number(g.steps_per_interval)}};
}

std::string fmt(const char* f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, x);
  return buf;
}

std::string line(const std::string& label, const std::string& value) {
  std::string l = "  " + label;
  if (l.size() < 26) l.resize(26, ' ');
  return l + value + "\n";
}

std::string header(const PlanSimulation& ps, const SimulateContext& ctx) {
  const Schedule& s = ps.schedule;
  std::string h = "meshplan simulate: ";
  if (ctx.problem) {
    const ParallelConfig& c = *ctx.config;
    h += ctx.problem->model.name + " on " + std::to_string(ctx.problem->job.gpus) + " x " +
         ctx.problem->hardware.name + ", tp=" + std::to_string(c.tp) + " pp=" + std::to_string(c.pp) +
         " dp=" + std::to_string(c.dp) + " zero=" + std::to_string(c.zero_stage) +
         (c.shard_group > 0 ? " shard_group=" + std::to_string(c.shard_group) : "");
  } else {
    h += "schedule " + ctx.schedule_file + " with equal unit chunks (F 1 ms, B 2 ms per model chunk), free transfers";
  }
  h += "\nschedule: " + std::string(to_string(s.kind)) + ", P=" + std::to_string(s.pp) +
       ", v=" + std::to_string(s.virtual_stages) + ", M=" + std::to_string(s.num_micro_batches) +
       (ctx.schedule_file.empty() ? "" : " (from " + ctx.schedule_file + ")") +
       (ctx.ideal_network ? ", ideal network" : "") +
       (ps.result.replicas > 1 ? ", 2 DP replicas simulated (replica 0 slowed)" : "") + "\n";
  return h;
}

std::string goodput_table(const SimulateContext& ctx) {
  const GoodputInput& in = *ctx.goodput_in;
  const GoodputReport& g = *ctx.goodput;
  std::string t = "goodput (" + fmt("%.0f", in.gpus) + " GPUs, GPU MTBF " + fmt("%g", in.gpu_mtbf_hours) +
                  " h, checkpoint " + fmt("%g", in.checkpoint_s) + " s, restart " + fmt("%g", in.restart_s) + " s)\n";
  t += line("job MTBF", fmt("%.3g h", g.job_mtbf_s / 3600) + fmt(" (%.3g failures/day)", g.failures_per_day));
  t += line("Young interval", fmt("%.3g min", g.young_interval_s / 60) + "  sqrt(2 C M)");
  t += line("Daly interval", fmt("%.3g min", g.daly_interval_s / 60) + fmt("  goodput %.2f %%", 100 * g.goodput_at_daly));
  if (in.interval_s > 0)
    t += line("every " + fmt("%g", in.interval_s / 60) + " min",
              fmt("goodput %.2f %%", 100 * g.goodput_at_interval) +
                  fmt(" (first-order %.2f %%)", 100 * g.first_order_at_interval) +
                  (g.steps_per_interval > 0 ? fmt(", %.3g steps per interval", g.steps_per_interval) : ""));
  return t;
}

}  // namespace

std::string simulate_json(const PlanSimulation& ps, const SimulateContext& ctx) {
  const SimSummary& s = ps.summary;
  ojson j;
  j["schema"] = "meshplan.simulate/1";
  j["step_s"] = report_number(s.step_s);
  j["bubble_fraction"] = report_number(s.bubble_fraction);
  j["events"] = ps.result.events;
  ojson checks = ojson::array();
  for (const Check& c : ps.checks) checks.push_back({{"name", c.name}, {"ok", c.ok}, {"detail", c.detail}});
  j["checks"] = checks;
  ojson stages = ojson::array();
  for (const StageReport& st : s.stages) {
    ojson o = {{"stage", st.stage},
               {"peak_activation_bytes", report_bytes(st.peak_activation_bytes)},
               {"peak_in_flight", report_number(st.peak_in_flight)}};
    if (!ps.model_in_flight.empty()) o["model_in_flight"] = report_number(ps.model_in_flight[st.stage]);
    stages.push_back(o);
  }
  j["stages"] = stages;
  j["worst_stage"] = s.worst_stage;
  j["schedule"] = {{"kind", to_string(ps.schedule.kind)},       {"pp", ps.schedule.pp},
                   {"virtual_stages", ps.schedule.virtual_stages}, {"num_micro_batches", ps.schedule.num_micro_batches},
                   {"file", ctx.schedule_file},                    {"ideal_network", ctx.ideal_network},
                   {"replicas_simulated", ps.result.replicas}};
  j["pipeline_s"] = report_number(s.pipeline_s);
  j["closed_form_bubble_fraction"] = report_number(ps.closed_form_bubble);
  j["critical"] = {{"rank", lane_name(ps.result, s.critical_lane)}, {"time", breakdown_object(s.critical)}};
  if (ctx.problem) {
    j["config"] = config_object(*ctx.config);
    const TimeBreakdown& e = ps.estimate.time;
    j["estimate"] = {{"step_s", report_number(e.step_s)},         {"compute_s", report_number(e.compute_s)},
                     {"tp_comm_s", report_number(e.tp_comm_s)},   {"pp_bubble_s", report_number(e.pp_bubble_s)},
                     {"pp_comm_s", report_number(e.pp_comm_s)},   {"dp_comm_s", report_number(e.dp_comm_s)},
                     {"optimizer_s", report_number(e.optimizer_s)}};
  }
  if (ctx.goodput) j["goodput"] = goodput_object(*ctx.goodput_in, *ctx.goodput);
  if (ctx.problem) j["provenance"] = provenance_object(*ctx.problem);
  return j.dump(2) + "\n";
}

std::string simulate_table(const PlanSimulation& ps, const SimulateContext& ctx) {
  const SimSummary& s = ps.summary;
  std::string t = header(ps, ctx);
  std::string step = fmt("%.6g s", s.step_s);
  if (ctx.problem)
    step += fmt("   (estimate %.6g s", ps.estimate.time.step_s) +
            fmt(", %+.2f %%)", 100 * (s.step_s - ps.estimate.time.step_s) / ps.estimate.time.step_s);
  t += line("step time", step);
  t += line("bubble", fmt("%.2f %%", 100 * s.bubble_fraction) +
                          fmt("   (closed form, equal stages: %.2f %%)", 100 * ps.closed_form_bubble));
  t += line("events", std::to_string(ps.result.events) + " (" + std::to_string(ps.result.actions) + " actions)");
  t += "exposed time on the rank that ends last (" + lane_name(ps.result, s.critical_lane) + ")\n";
  const Breakdown& b = s.critical;
  t += line("compute", fmt("%.6g s", b.compute_s));
  t += line("tp comm (in layers)", fmt("%.6g s", b.tp_comm_s));
  t += line("pp bubble", fmt("%.6g s", b.bubble_s));
  t += line("pp comm", fmt("%.6g s", b.pp_comm_s));
  t += line("dp comm", fmt("%.6g s", b.dp_comm_s));
  t += line("zero-3 gathers", fmt("%.6g s", b.zero3_gather_s));
  t += line("optimizer", fmt("%.6g s", b.optimizer_s));
  t += "peak activation memory per stage (micro-batches in flight: simulated";
  t += ps.model_in_flight.empty() ? ")\n" : " / cost model)\n";
  for (const StageReport& st : s.stages) {
    std::string v = fmt("%10.4g GB   ", st.peak_activation_bytes / 1e9) + fmt("%g", st.peak_in_flight);
    if (!ps.model_in_flight.empty()) v += fmt(" / %g", ps.model_in_flight[st.stage]);
    if (st.stage == s.worst_stage) v += "   <- worst";
    t += line("stage " + std::to_string(st.stage), v);
  }
  t += "checks\n";
  for (const Check& c : ps.checks) t += "  [" + std::string(c.ok ? "ok" : "FAIL") + "] " + c.name + ": " + c.detail + "\n";
  if (ctx.goodput) t += goodput_table(ctx);
  return t;
}

}  // namespace meshplan::cli
