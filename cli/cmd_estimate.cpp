// `meshplan estimate`: one configuration in, its memory/time/throughput breakdown out (DESIGN.md).
#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/html_output.h"
#include "cli/launch_export.h"
#include "cli/options.h"
#include "cli/plan_file.h"
#include "cli/regime_note.h"
#include "cli/report.h"
#include "core/moe_load.h"
#include "costmodel/estimate.h"

namespace meshplan::cli {

namespace {

struct EstimateArgs {
  ProblemOptions problem;
  ConfigOptions config;
  OutputOptions output;
  PlanInputOptions plan;
  std::string export_kind;  // "" or a launch-script kind (cli/launch_export.h)
  std::string html;         // --html FILE: the one-plan report page (cli/html_report.h)
};

int run_estimate(const EstimateArgs& a) {
  if (auto f = check_format(a.output); !f) return report_error(f.error());
  auto setup = resolve_setup(a.problem, a.config, a.plan);
  if (!setup) return report_error(setup.error());
  const Setup& s = setup.value();
  if (!a.export_kind.empty() && !is_launch_export(a.export_kind))
    return report_error(make_error("command line", "--export", a.export_kind, "unknown export",
                                   std::string("use ") + kLaunchExportKinds));
  const StepEstimate est = estimate_step(s.problem, s.config);
  if (a.export_kind.empty()) {
    std::cout << render_estimate(s.problem, est, a.output.format);
  } else {
    auto script = launch_export(a.export_kind, s.problem, s.config);
    if (!script) return report_error(script.error());
    std::cout << script.value();
  }
  std::cout.flush();
  if (!a.output.output.empty()) {
    // --output writes a plan file with this one candidate, so it can be simulated or run.
    PlanFile plan;
    plan.problem = s.problem;
    plan.candidates.push_back(est);
    plan.searched = 1;
    if (auto w = write_text_file(a.output.output, plan_file_json(plan)); !w) return report_error(w.error());
  }
  if (!a.html.empty())
    if (auto w = write_html_report(a.html, "estimate", s.problem, {est}, {}, "", nullptr, a.problem.profiles_dir); !w)
      return report_error(w.error());
  // One line on stderr (stdout stays byte-identical and parseable) when validation shows us weak
  // here, and one more when the profile's runs are weak as a whole; last, so that a failed write stays the command's one line, and not under a launch script.
  if (a.export_kind.empty())
    if (const std::string note = validation_regime_note(s.config, s.problem.model.moe.enabled(), a.problem.profiles_dir, s.problem.hardware.name, moe_load_balanced(s.problem.job)); !note.empty()) {
      std::cout.flush();  // the report's last line first where both streams share one file
      std::cerr << note << "\n";
    }
  return kExitOk;
}

}  // namespace

void add_estimate_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<EstimateArgs>();
  CLI::App* sub = app.add_subcommand(
      "estimate", "Memory, step time and throughput of one configuration (DP = gpus / (tp*pp))");
  add_problem_options(sub, args->problem);
  add_config_options(sub, args->config);
  add_plan_input_options(sub, args->plan);
  add_output_options(sub, args->output);
  sub->add_option("--export", args->export_kind,
                  "Print a launch script instead: slurm | torchrun (Megatron-LM via torchrun), mpirun | srun (meshplan run)");
  sub->add_option("--html", args->html,
                  "Write a self-contained HTML report of this plan: memory and time breakdowns, timeline, accuracy");
  sub->footer("--output FILE writes a plan file (meshplan.plan/1) with this configuration as its "
              "only candidate; --plan FILE [--candidate i] reads one back (config flags override).");
  sub->callback([args, &exit_code] { exit_code = run_estimate(*args); });
}

}  // namespace meshplan::cli
