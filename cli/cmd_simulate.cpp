// `meshplan simulate`: event simulation of a plan's schedule, schedule checks, timelines, goodput.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/options.h"
#include "cli/simulate_report.h"
#include "core/io.h"
#include "simulator/timeline_text.h"
#ifdef MESHPLAN_HAVE_GRAPHVIZ
#include "cli/graphviz_render.h"
#endif

namespace meshplan::cli {

namespace {

constexpr int kGraphMaxNodes = 600;  // --graph: beyond this, dot layouts take long and are unreadable

struct SimulateArgs {
  ProblemOptions problem;
  ConfigOptions config;
  OutputOptions output;
  PlanInputOptions plan;
  std::string trace, svg, dot, graph, schedule_file;
  std::string html;  // --html FILE: the one-plan report page (cli/html_report.h); needs a plan
  double svg_from_ms = 0, svg_to_ms = -1;  // Gantt time window in ms; -1 = end of the step
  std::string svg_rows;                    // Gantt rows "a-b" or "a" (lanes); empty = all
  bool ideal_network = false;
  std::vector<std::string> slow_ranks, slow_links;
  double gpu_mtbf_hours = 0, checkpoint_s = 0, restart_s = 300, interval_min = 15;
  CLI::App* app = nullptr;
};

// "r=f" -> (r, f); the flag is named in the error.
Result<std::pair<int, double>> parse_rank_factor(const std::string& text, const char* flag) {
  const size_t eq = text.find('=');
  try {
    size_t used = 0;
    if (eq != std::string::npos) {
      const int r = std::stoi(text.substr(0, eq), &used);
      const double f = std::stod(text.substr(eq + 1));
      if (used == eq) return std::make_pair(r, f);
    }
  } catch (const std::exception&) {
  }
  return make_error("command line", flag, text, "expected RANK=FACTOR", std::string("e.g. ") + flag + " 1=1.3");
}

Result<SimOptions> sim_options(const SimulateArgs& a) {
  SimOptions o;
  o.ideal_network = a.ideal_network;
  for (const auto& s : a.slow_ranks) {
    auto rf = parse_rank_factor(s, "--slow-rank");
    if (!rf) return rf.error();
    o.slow_ranks.push_back(*rf);
  }
  for (const auto& s : a.slow_links) {
    auto rf = parse_rank_factor(s, "--slow-link");
    if (!rf) return rf.error();
    o.slow_links.push_back(*rf);
  }
  return o;
}

// --svg-from-ms / --svg-to-ms / --svg-rows into the Gantt chart's view.
Result<GanttView> gantt_view(const SimulateArgs& a) {
  GanttView v;
  if (a.svg_from_ms < 0 || (a.svg_to_ms >= 0 && a.svg_to_ms <= a.svg_from_ms))
    return make_error("command line", "--svg-to-ms", std::to_string(a.svg_to_ms),
                      "the window must satisfy 0 <= --svg-from-ms < --svg-to-ms", "e.g. --svg-from-ms 0 --svg-to-ms 500");
  v.from_ns = static_cast<Nanoseconds>(a.svg_from_ms * 1e6);
  v.to_ns = a.svg_to_ms < 0 ? -1 : static_cast<Nanoseconds>(a.svg_to_ms * 1e6);
  if (a.svg_rows.empty()) return v;
  const size_t dash = a.svg_rows.find('-');
  char* end = nullptr;
  const long first = std::strtol(a.svg_rows.c_str(), &end, 10);
  const long last = dash == std::string::npos ? first : std::strtol(a.svg_rows.c_str() + dash + 1, &end, 10);
  if (*end != '\0' || first < 0 || last < first)
    return make_error("command line", "--svg-rows", a.svg_rows, "must be a row or a range of rows a-b (0-based)",
                      "e.g. --svg-rows 0-7");
  v.first_lane = static_cast<int>(first);
  v.last_lane = static_cast<int>(last);
  return v;
}

Result<bool> write_timelines(const SimulateArgs& a, const PlanSimulation& ps, const std::string& title) {
  Result<bool> ok = true;
  if (!a.trace.empty()) ok = write_text_file(a.trace, trace_json(ps.result, title));
  if (ok && !a.svg.empty()) {
    auto view = gantt_view(a);
    if (!view) return view.error();
    ok = write_text_file(a.svg, gantt_svg(ps.result, title, 1200, *view));
  }
  if (ok && !a.dot.empty()) ok = write_text_file(a.dot, schedule_dot(ps.schedule));
  if (!ok || a.graph.empty()) return ok;
  const int nodes = schedule_dot_nodes(ps.schedule);
  if (nodes > kGraphMaxNodes) {  // the rest of the command is still useful: a note, not an error
    std::cerr << "meshplan: note: --graph " << a.graph << " skipped: " << nodes << " actions (limit "
              << kGraphMaxNodes << "); use --dot and render a part yourself, or --svg for the timeline\n";
    return true;
  }
#ifdef MESHPLAN_HAVE_GRAPHVIZ
  auto svg = render_dot_svg(schedule_dot(ps.schedule), a.graph);
  if (!svg) return svg.error();
  return write_text_file(a.graph, *svg);
#else
  return make_error(a.graph, "--graph", "", "this build has no Graphviz (libgvc)",
                    "install libgraphviz-dev and rebuild, or use --dot");
#endif
}

Result<bool> add_goodput(const SimulateArgs& a, const PlanSimulation& ps, SimulateContext& ctx) {
  if (a.gpu_mtbf_hours <= 0 && a.app->count("--gpu-mtbf-hours") == 0) return true;
  if (!ctx.problem)
    return make_error("command line", "--gpu-mtbf-hours", std::to_string(a.gpu_mtbf_hours),
                      "goodput needs the job's GPU count", "give a plan (--plan or --model ... --gpus)");
  if (a.app->count("--checkpoint-s") == 0)
    return make_error("command line", "--checkpoint-s", "", "goodput needs the checkpoint write time",
                      "e.g. --checkpoint-s 60");
  GoodputInput in;
  in.gpus = static_cast<double>(ctx.problem->job.gpus);
  in.gpu_mtbf_hours = a.gpu_mtbf_hours;
  in.checkpoint_s = a.checkpoint_s;
  in.restart_s = a.restart_s;
  in.interval_s = a.interval_min * 60.0;
  in.step_s = ps.summary.step_s;
  auto g = goodput(in);
  if (!g) return g.error();
  ctx.goodput_in = in;
  ctx.goodput = *g;
  return true;
}

int run_simulate(const SimulateArgs& a) {
  if (auto f = check_format(a.output); !f) return report_error(f.error());
  auto opts = sim_options(a);
  if (!opts) return report_error(opts.error());
  std::optional<Schedule> custom;
  if (!a.schedule_file.empty()) {
    auto text = read_text_file(a.schedule_file);
    if (!text) return report_error(text.error());
    auto s = parse_schedule_text(*text, a.schedule_file);
    if (!s) return report_error(s.error());
    custom = std::move(*s);
  }
  SimulateContext ctx;
  ctx.ideal_network = a.ideal_network;
  ctx.schedule_file = a.schedule_file;
  std::optional<Setup> setup;
  Result<PlanSimulation> ps = Error{};
  if (custom && a.problem.model.empty() && a.plan.plan.empty()) {
    ps = simulate_unit_schedule(*custom, *opts, a.schedule_file);
  } else {
    auto st = resolve_setup(a.problem, a.config, a.plan);
    if (!st) return report_error(st.error());
    setup = std::move(*st);
    ctx.problem = &setup->problem;
    ctx.config = &setup->config;
    ps = simulate_plan(setup->problem, setup->config, *opts, custom ? &*custom : nullptr,
                       a.schedule_file.empty() ? "schedule" : a.schedule_file);
  }
  if (!ps) return report_error(ps.error());
  if (auto g = add_goodput(a, *ps, ctx); !g) return report_error(g.error());
  const std::string title = "meshplan simulate: " + std::string(to_string(ps->schedule.kind)) +
                            " P=" + std::to_string(ps->schedule.pp) + " v=" + std::to_string(ps->schedule.virtual_stages) +
                            " M=" + std::to_string(ps->schedule.num_micro_batches) +
                            (ctx.problem ? ", " + ctx.problem->model.name : std::string());
  if (auto w = write_timelines(a, *ps, title); !w) return report_error(w.error());
  if (!a.html.empty()) {
    if (!ctx.problem)
      return report_error(make_error("command line", "--html", a.html, "the report needs a plan",
                                     "give --plan FILE or --model ... --gpus ..."));
    auto w = write_html_report(a.html, "simulate", *ctx.problem, {ps->estimate}, {}, "", &*ps, a.problem.profiles_dir);
    if (!w) return report_error(w.error());
  }
  std::string report;
  if (a.output.format == "table") report = simulate_table(*ps, ctx);
  else if (a.output.format == "json") report = simulate_json(*ps, ctx);
  else report = json_to_yaml(simulate_json(*ps, ctx));
  if (auto e = emit(a.output, report); !e) return report_error(e.error());
  return kExitOk;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<SimulateArgs>();
  CLI::App* sub = app.add_subcommand(
      "simulate", "Event simulation of a plan's pipeline schedule: checks, timelines, straggler and goodput what-ifs");
  args->app = sub;
  add_problem_options(sub, args->problem);
  add_config_options(sub, args->config);
  add_plan_input_options(sub, args->plan);
  add_output_options(sub, args->output);
  sub->add_option("--trace", args->trace, "Write a Chrome/Perfetto trace-event JSON timeline");
  sub->add_option("--svg", args->svg,
                  "Write a Gantt chart (SVG) of the simulated step (aggregated per pixel above 6,000 actions)");
  sub->add_option("--svg-from-ms", args->svg_from_ms, "Gantt chart: start of the time window, ms");
  sub->add_option("--svg-to-ms", args->svg_to_ms, "Gantt chart: end of the time window, ms (default: end of the step)");
  sub->add_option("--svg-rows", args->svg_rows,
                  "Gantt chart: rows a-b, 0-based (row = replica * pp + pipeline rank) (default: all)");
  sub->add_option("--html", args->html,
                  "Write a self-contained HTML report of this plan: memory and time breakdowns, timeline, accuracy");
  sub->add_option("--dot", args->dot, "Write the schedule's dependency graph as DOT text");
  sub->add_option("--graph", args->graph, "Render the dependency graph to SVG through Graphviz (small plans)");
  sub->add_option("--schedule-file", args->schedule_file,
                  "Simulate a hand-written schedule (format of the golden files); without a plan, unit costs");
  sub->add_flag("--ideal-network", args->ideal_network, "Make every transfer free (p2p, DP, ZeRO, TP)");
  sub->add_option("--slow-rank", args->slow_ranks, "Straggler: pipeline rank R of DP replica 0 computes F x slower (R=F)");
  sub->add_option("--slow-link", args->slow_links, "Slow link between pipeline ranks R and R+1 of replica 0 (R=F)");
  sub->add_option("--gpu-mtbf-hours", args->gpu_mtbf_hours, "Goodput: mean time between failures of one GPU, hours");
  sub->add_option("--checkpoint-s", args->checkpoint_s, "Goodput: seconds to write one checkpoint");
  sub->add_option("--restart-s", args->restart_s, "Goodput: seconds from a failure back to training (default 300)");
  sub->add_option("--checkpoint-interval-min", args->interval_min,
                  "Goodput: checkpoint interval to evaluate, minutes (default 15)");
  sub->callback([args, &exit_code] { exit_code = run_simulate(*args); });
}

}  // namespace meshplan::cli
