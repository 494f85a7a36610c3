// --html FILE (see html_output.h): simulate the chosen plan, read the validation accuracy, write the page.
#include "cli/html_output.h"

#include "cli/html_report.h"
#include "cli/html_svg.h"
#include "cli/options.h"
#include "cli/regime_note.h"
#include "simulator/plan_sim.h"
#include "simulator/timeline_text.h"

namespace meshplan::cli {

namespace {

// 1,000 px of time axis: with the chart's labels it fits a 1,200 px page without scrolling.
constexpr int kTimelineWidthPx = 1000;

void add_timeline(const PlanSimulation& ps, const std::string& model, HtmlReportInput& in) {
  const std::string title = std::string(to_string(ps.schedule.kind)) + " P=" + std::to_string(ps.schedule.pp) +
                            " v=" + std::to_string(ps.schedule.virtual_stages) +
                            " M=" + std::to_string(ps.schedule.num_micro_batches) + ", " + model;
  in.timeline_svg = gantt_svg(ps.result, title, kTimelineWidthPx);
  in.timeline_note = "Simulated step: " + fixed(ps.summary.step_s, 3) + " s (cost model: " +
                     fixed(ps.estimate.time.step_s, 3) + " s). One row per pipeline rank of one DP replica; " +
                     "meshplan simulate --svg draws windows and row ranges of it.";
}

}  // namespace

Result<bool> write_html_report(const std::string& path, const std::string& command, const Problem& problem,
                               const std::vector<StepEstimate>& candidates, const std::vector<StepEstimate>& pareto,
                               const std::string& search_summary, const PlanSimulation* sim,
                               const std::string& profiles_dir) {
  HtmlReportInput in;
  in.command = command;
  in.problem = problem;
  in.candidates = candidates;
  in.pareto = pareto;
  in.search_summary = search_summary;
  if (sim) {
    add_timeline(*sim, problem.model.name, in);
  } else {
    auto ps = simulate_plan(problem, candidates.front().config, SimOptions{});
    if (ps) add_timeline(*ps, problem.model.name, in);
    else in.timeline_note = "No timeline: the simulator rejected this plan: " + ps.error().one_line();
  }
  in.accuracy = validation_accuracy(candidates.front().config, problem.model.moe.enabled(), profiles_dir);
  auto w = write_text_file(path, html_report(in));
  if (!w) {
    Error e = w.error();
    e.field = "--html";  // write_text_file names --output
    return e;
  }
  return w;
}

}  // namespace meshplan::cli
