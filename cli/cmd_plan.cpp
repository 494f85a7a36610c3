// `meshplan plan`: search every TP/PP/DP/ZeRO layout, rank, explain and export (DESIGN.md).
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "cli/commands.h"
#include "cli/launch_export.h"
#include "cli/help_text.h"
#include "cli/html_output.h"
#include "cli/options.h"
#include "cli/plan_file.h"
#include "cli/report.h"
#include "cli/report_json.h"
#include "core/limits.h"
#include "core/moe_load.h"
#include "core/te_attention_backend.h"
#include "planner/diagnose.h"
#include "cli/regime_note.h"
#include "planner/explain.h"
#include "planner/export.h"
#include "planner/export_frameworks.h"
#include "planner/framework_space.h"
#include "planner/plan_table.h"
#include "planner/search.h"

namespace meshplan::cli {

namespace {

const char* kWhere = "command line";

// Narrowing flags take comma-separated lists ("--tp 2,4,8"); kept as text for our own errors.
struct PlanArgs {
  ProblemOptions problem;
  OutputOptions output;
  std::string tp, pp, zero, micro_batch, recompute, schedule, virtual_stages;
  std::string cp;  // --cp list (context parallel)
  bool sp_on = false, sp_off = false, overlap_on = false, overlap_off = false;
  int max_tp = 0, max_pp = 0, top = 5;
  std::string objective = "step-time";
  double dollars_per_gpu_hour = 0;
  bool explain = false, pareto = false, no_progress = false;
  std::string export_kind;  // "", "megatron", "deepspeed"
  std::string html;         // --html FILE: the self-contained report page (cli/html_report.h)
  std::string ep, etp;      // --ep / --etp lists (MoE models, planner/moe_space.h)
  std::string shard_group;  // --shard-group list (HSDP, planner/hsdp_space.h)
  std::string pipeline_split;  // --pipeline-split even,balanced (planner/pipeline_balance.h)
};

Result<std::vector<int64_t>> parse_ints(const std::string& text, const char* flag, int64_t lo,
                                        int64_t hi) {
  std::vector<int64_t> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < lo || v > hi)
      return make_error(kWhere, flag, text,
                        "must be integers in " + std::to_string(lo) + ".." + std::to_string(hi) +
                            " separated by commas",
                        std::string("e.g. ") + flag + " " + std::to_string(lo));
    // Duplicates ("--tp 8,8,8") would multiply the search without changing its answer.
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  return out;
}

Result<std::vector<int>> parse_small_ints(const std::string& text, const char* flag, int lo, int hi) {
  auto r = parse_ints(text, flag, lo, hi);
  if (!r) return r.error();
  return std::vector<int>(r->begin(), r->end());
}

template <class T>
Result<std::vector<T>> parse_names(const std::string& text, const char* flag,
                                   std::optional<T> (*parse)(const std::string&), const char* hint) {
  std::vector<T> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const std::optional<T> v = parse(item);
    if (!v) return make_error(kWhere, flag, text, "unknown value '" + item + "'", hint);
    if (std::find(out.begin(), out.end(), *v) == out.end()) out.push_back(*v);
  }
  return out;
}

Result<std::vector<int>> on_off(bool on, bool off, const char* flag) {
  if (on && off)
    return make_error(kWhere, flag, "", "given together with its --no- form", "pass one of them");
  if (on) return std::vector<int>{1};
  if (off) return std::vector<int>{0};
  return std::vector<int>{};
}

// Fills opt.space from the narrowing flags; the first bad flag is the Error.
Result<bool> narrow(const PlanArgs& a, SearchSpace& s) {
  const int64_t big = limits::kMaxDegree;
  if (!a.tp.empty()) { auto v = parse_small_ints(a.tp, "--tp", 1, big); if (!v) return v.error(); s.tp = *v; }
  if (!a.pp.empty()) { auto v = parse_small_ints(a.pp, "--pp", 1, big); if (!v) return v.error(); s.pp = *v; }
  if (!a.cp.empty()) { auto v = parse_small_ints(a.cp, "--cp", 1, big); if (!v) return v.error(); s.cp = *v; }
  if (!a.zero.empty()) { auto v = parse_small_ints(a.zero, "--zero", 0, 3); if (!v) return v.error(); s.zero = *v; }
  if (!a.shard_group.empty()) {
    auto v = parse_small_ints(a.shard_group, "--shard-group", 0, static_cast<int>(limits::kMaxGpus));
    if (!v) return v.error();
    s.shard_group = *v;
  }
  if (!a.micro_batch.empty()) {
    auto v = parse_ints(a.micro_batch, "--micro-batch", 1, limits::kMaxGlobalBatch);
    if (!v) return v.error();
    s.micro_batch = *v;
  }
  if (!a.virtual_stages.empty()) {
    auto v = parse_small_ints(a.virtual_stages, "--virtual-stages", 1, big);
    if (!v) return v.error();
    s.virtual_stages = *v;
  }
  if (!a.recompute.empty()) {
    auto v = parse_names<Recompute>(a.recompute, "--recompute", parse_recompute, "use none, selective or full");
    if (!v) return v.error();
    s.recompute = *v;
  }
  if (!a.pipeline_split.empty()) {
    auto parse_split = [](const std::string& t) -> std::optional<int> {
      if (t == "even") return 0;
      if (t == "balanced") return 1;
      if (t == "embedding-loss") return 2;
      return std::nullopt;
    };
    auto v = parse_names<int>(a.pipeline_split, "--pipeline-split", parse_split,
                              "use even, balanced, embedding-loss, or a comma-separated list of them");
    if (!v) return v.error();
    s.pipeline_split = *v;
  }
  if (!a.schedule.empty()) {
    auto v = parse_names<ScheduleKind>(a.schedule, "--schedule", parse_schedule,
                                       "use gpipe, 1f1b, interleaved, zb-h1 or dualpipev");
    if (!v) return v.error();
    s.schedule = *v;
  }
  auto sp = on_off(a.sp_on, a.sp_off, "--sequence-parallel");
  if (!sp) return sp.error();
  s.sequence_parallel = *sp;
  auto ov = on_off(a.overlap_on, a.overlap_off, "--dp-overlap");
  if (!ov) return ov.error();
  s.dp_overlap = *ov;
  if (a.max_tp < 0 || a.max_pp < 0)
    return make_error(kWhere, a.max_tp < 0 ? "--max-tp" : "--max-pp",
                      std::to_string(a.max_tp < 0 ? a.max_tp : a.max_pp), "must be >= 1", "e.g. --max-tp 8");
  s.max_tp = a.max_tp;
  s.max_pp = a.max_pp;
  if (!a.ep.empty()) { auto v = parse_small_ints(a.ep, "--ep", 1, big); if (!v) return v.error(); s.ep = *v; }
  if (!a.etp.empty()) { auto v = parse_small_ints(a.etp, "--etp", 1, big); if (!v) return v.error(); s.etp = *v; }
  return true;
}

Result<SearchOptions> search_options(const PlanArgs& a, const Problem& p) {
  SearchOptions opt;
  if (auto r = narrow(a, opt.space); !r) return r.error();
  if (a.top < 1) return make_error(kWhere, "--top", std::to_string(a.top), "must be >= 1", "e.g. --top 5");
  opt.top_k = a.top;
  const auto obj = parse_objective(a.objective);
  if (!obj)
    return make_error(kWhere, "--objective", a.objective, "unknown objective",
                      "use step-time, tokens-per-s, mfu or cost");
  opt.objective = *obj;
  opt.dollars_per_gpu_hour = a.dollars_per_gpu_hour;
  if (opt.objective == Objective::Cost && a.dollars_per_gpu_hour <= 0 &&
      p.hardware.dollars_per_gpu_hour <= 0)
    return make_error(kWhere, "--objective", "cost", "profile " + p.hardware.name + " has no price",
                      "pass --dollars-per-gpu-hour");
  opt.pareto = a.pareto;
  if (!a.export_kind.empty() && !is_framework_export(a.export_kind) && !is_launch_export(a.export_kind))
    return make_error(kWhere, "--export", a.export_kind, "unknown export",
                      std::string("use megatron, deepspeed, fsdp, torchtitan, nemo, ") + kLaunchExportKinds);
  if (auto e = check_space_for_framework(framework_spec(p.job.framework), opt.space); !e.empty())
    return e.front();
  // --moe-a2a-overlap narrows the space (planner/moe_space.h): say so rather than "nothing fits".
  const auto only = [](const auto& list, auto value) {
    return !list.empty() && std::all_of(list.begin(), list.end(), [&](const auto& x) { return x == value; });
  };
  if (p.job.knobs.moe_a2a_overlap && only(opt.space.recompute, Recompute::Full))
    return make_error(kWhere, "--moe-a2a-overlap", "true", "cannot run under full recomputation (--recompute full)",
                      "add selective or none to --recompute, or drop --moe-a2a-overlap");
  if (p.job.knobs.moe_a2a_overlap && only(opt.space.ep, 1))
    return make_error(kWhere, "--moe-a2a-overlap", "true", "needs expert parallelism (--ep 1 only)",
                      "let --ep try values above 1, or drop --moe-a2a-overlap");
  // --activation-offload-layers keeps pp 1 and recompute none (core/offload_config.h).
  const int offload = p.job.knobs.activation_offload_layers;
  if (offload > 0 && !opt.space.recompute.empty() &&
      std::find(opt.space.recompute.begin(), opt.space.recompute.end(), Recompute::None) == opt.space.recompute.end())
    return make_error(kWhere, "--activation-offload-layers", std::to_string(offload),
                      "cannot run with activation recomputation (--recompute without none)",
                      "add none to --recompute, or drop --activation-offload-layers");
  if (offload > 0 && !opt.space.pp.empty() &&
      std::find(opt.space.pp.begin(), opt.space.pp.end(), 1) == opt.space.pp.end())
    return make_error(kWhere, "--activation-offload-layers", std::to_string(offload),
                      "cannot run with pipeline parallelism (--pp without 1)",
                      "add 1 to --pp, or drop --activation-offload-layers");
  if (!p.model.moe.enabled() && (!a.ep.empty() || !a.etp.empty()))  // planner/moe_space.h
    return make_error(kWhere, a.ep.empty() ? "--etp" : "--ep", a.ep.empty() ? a.etp : a.ep,
                      "needs a mixture-of-experts model; " + p.model.name + " is dense",
                      "drop --ep/--etp (dense models run with ep=etp=1)");
  return opt;
}

// Redraws "searching [#####     ] 45%" on stderr once a search has run for a second, when stderr
// is a terminal; erases it at the end.
class ProgressBar {
 public:
  explicit ProgressBar(bool allowed) : enabled_(allowed && isatty(STDERR_FILENO)) {}
  ~ProgressBar() {
    if (shown_) std::fprintf(stderr, "\r\033[K");
  }
  void update(int64_t done, int64_t total) {
    if (!enabled_ || total <= 0) return;
    const auto now = std::chrono::steady_clock::now();
    if (now - start_ < std::chrono::seconds(1) || now - last_ < std::chrono::milliseconds(100)) return;
    last_ = now;
    shown_ = true;
    const int width = 30, filled = static_cast<int>(width * done / total);
    std::fprintf(stderr, "\rsearching [%s%s] %3d%% %s/%s configurations",
                 std::string(filled, '#').c_str(), std::string(width - filled, ' ').c_str(),
                 static_cast<int>(100 * done / total), group_thousands(done).c_str(),
                 group_thousands(total).c_str());
  }

 private:
  bool enabled_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_ = start_;
};

// The plan file (DESIGN.md keys) plus "objective", "search" counts and, with --pareto, "pareto".
std::string plan_json(const Problem& p, const SearchOptions& opt, const SearchResult& r) {
  PlanFile plan;
  plan.problem = p;
  plan.candidates = r.top;
  plan.searched = r.space;
  for (int i = 0; i < kNumReasons; ++i) plan.rejected[reason_name(static_cast<Reason>(i))] = r.rejected.n[i];
  ojson j = ojson::parse(plan_file_json(plan));
  j["objective"] = to_string(opt.objective);
  j["search"] = {{"space", r.space},           {"fitting", r.fitting()},
                 {"memory_checks", r.memory_checks}, {"evaluated", r.evaluated},
                 {"pruned_by_time_bound", r.pruned}, {"top_k", opt.top_k}};
  if (opt.pareto) {
    ojson front = ojson::array();
    for (const StepEstimate& e : r.pareto) front.push_back(estimate_object(p, e));
    j["pareto"] = front;
  }
  return j.dump(2) + "\n";
}

Result<std::string> report(const PlanArgs& a, const Problem& p, const SearchOptions& opt,
                           const SearchResult& r, const std::string& json) {
  if (!a.export_kind.empty()) {
    if (is_launch_export(a.export_kind)) return launch_export(a.export_kind, p, r.top.front().config);
    auto ex = export_for_framework(a.export_kind, p, r.top.front().config);
    if (!ex) return ex.error();
    if (!ex->note.empty()) std::cerr << "meshplan: note: " << ex->note << "\n";
    return ex->text;
  }
  if (a.output.format == "json") return json;
  if (a.output.format == "yaml") return json_text_to_yaml(json);
  return plan_table(p, opt, r);
}

int run_plan(const PlanArgs& in) {
  PlanArgs a = in;
  if (auto f = check_format(a.output); !f) return report_error(f.error());
  // --export K plans for framework K unless --framework says otherwise (then they must agree).
  if (is_framework_export(a.export_kind)) {
    const bool given_fw = a.problem.app && a.problem.app->count("--framework") > 0;
    if (!given_fw) a.problem.framework = a.export_kind;
    else if (parse_framework(a.problem.framework) != export_framework(a.export_kind))
      return report_error(make_error(kWhere, "--export", a.export_kind,
                                     "does not match --framework " + a.problem.framework,
                                     "drop --framework: --export " + a.export_kind + " plans for it"));
  }
  // The torchrun launch scripts start Megatron-LM's pretrain_gpt.py with the --export megatron
  // arguments: plan under Megatron's rules, and refuse another framework rather than launch a
  // plan it cannot run (meshplan's own run has the mpirun and srun scripts).
  if (a.export_kind == "slurm" || a.export_kind == "torchrun") {
    const bool given_fw = a.problem.app && a.problem.app->count("--framework") > 0;
    if (!given_fw) a.problem.framework = "megatron";
    else if (a.problem.framework != "megatron")
      return report_error(make_error(kWhere, "--export", a.export_kind,
                                     "launches Megatron-LM (pretrain_gpt.py), not --framework " + a.problem.framework,
                                     "use --export " + a.problem.framework +
                                         " for its config, or --framework megatron"));
  }
  auto problem = load_problem(a.problem);
  if (!problem) return report_error(problem.error());
  const Problem& p = problem.value();
  auto options = search_options(a, p);
  if (!options) return report_error(options.error());
  SearchOptions opt = options.value();
  // --explain compares #1 with #2, so it searches for at least two even with --top 1.
  if (a.explain) opt.top_k = std::max(opt.top_k, 2);
  SearchResult r;
  {
    ProgressBar bar(!a.no_progress);
    opt.progress = [&bar](int64_t done, int64_t total) { bar.update(done, total); };
    SearchOptions searched = opt;
    searched.pareto = opt.pareto || !a.html.empty();  // the page draws the front even without --pareto
    r = search(p, searched);
  }
  std::vector<StepEstimate> front;
  if (!a.html.empty()) front = opt.pareto ? r.pareto : std::move(r.pareto);
  if (r.top.empty()) return report_error(diagnose_no_plan(p, opt, r));
  const std::string why = a.explain ? explain_text(p, opt, r) : "";
  opt.top_k = a.top;
  if (static_cast<int>(r.top.size()) > a.top) r.top.resize(a.top);
  const std::string json = plan_json(p, opt, r);
  auto text = report(a, p, opt, r, json);
  if (!text) return report_error(text.error());
  std::cout << text.value();
  // Machine-readable stdout (json, yaml, an export) stays parseable: the explanation goes to stderr.
  const bool human = a.export_kind.empty() && a.output.format == "table";
  if (a.explain) (human ? std::cout : std::cerr) << "\n" << why;
  std::cout.flush();
  if (!a.output.output.empty())
    if (auto w = write_text_file(a.output.output, json); !w) return report_error(w.error());
  if (!a.html.empty()) {
    const std::string summary = "searched " + group_thousands(r.space) + " configurations, " +
                                group_thousands(r.fitting()) + " fit; objective " + to_string(opt.objective);
    auto w = write_html_report(a.html, "plan", p, r.top, front, summary, nullptr, a.problem.profiles_dir);
    if (!w) return report_error(w.error());
  }
  // One line on stderr when validation shows the model weak in the #1 plan's regime (and one more when
  // the runs on its hardware profile are weak as a whole); last, so that a
  // failed write stays the command's one line, and not under an export (a script or a config).
  if (a.export_kind.empty())
    if (const std::string note = validation_regime_note(r.top.front().config, p.model.moe.enabled(), a.problem.profiles_dir, p.hardware.name, moe_load_balanced(p.job)); !note.empty()) {
      std::cout.flush();  // the table's last line first where both streams share one file
      std::cerr << note << "\n";
    }
  // Every candidate was costed on the attention path the releases allow (core/te_attention_backend.h).
  if (const std::string te = te_attention_note(p.job.knobs, p.model, p.hardware.compute_capability); !te.empty()) {
    std::cout.flush();
    std::cerr << "note: " << te << "\n";
  }
  return kExitOk;
}

void add_narrowing_options(CLI::App* sub, PlanArgs& a) {
  sub->add_option("--tp", a.tp, "Tensor-parallel sizes to try, e.g. 8 or 2,4,8 (default: all)");
  sub->add_option("--pp", a.pp, "Pipeline-parallel sizes to try (default: all)");
  sub->add_option("--cp", a.cp, "Context-parallel sizes to try, e.g. 1,2,4 (default: 1, and for sequences of 8K "
                                "tokens or more every size leaving >= 4K tokens per GPU)");
  sub->add_option("--zero", a.zero, "ZeRO stages to try, e.g. 1,2 (default: 0,1,2,3)");
  sub->add_option("--shard-group", a.shard_group,
                  "HSDP shard groups (data-parallel ranks) to try with ZeRO 1-3, 0 = shard over all DP ranks, e.g. 0,8 "
                  "(default under --framework fsdp, torchtitan or megatron: 0 and one NVLink domain's DP ranks times 1, "
                  "2, 4, ...; elsewhere 0)");
  sub->add_option("--micro-batch", a.micro_batch, "Micro-batch sizes to try (default: divisors of batch/dp)");
  allowed_values(sub->add_option("--recompute", a.recompute, "Recompute modes to try, comma-separated (default: all)"),
                 {"none", "selective", "full"});
  allowed_values(sub->add_option("--schedule", a.schedule, "Schedules to try, comma-separated (default: all)"),
                 {"gpipe", "1f1b", "interleaved", "zb-h1", "dualpipev"});
  sub->add_option("--virtual-stages", a.virtual_stages, "Interleaved virtual stages to try (default: all)");
  allowed_values(sub->add_option("--pipeline-split", a.pipeline_split,
                                 "Layer splits over the pipeline chunks to try, comma-separated: even (as even as "
                                 "possible), balanced (the chunk with the LM head and MTP modules gets fewer layers, so "
                                 "the ranks' FLOPs even out; megatron and meshplan only, stated as Megatron's "
                                 "--pipeline-model-parallel-layout), embedding-loss (Megatron-Bridge's large-model "
                                 "split: the embedding and the loss count as one layer each, so the first and last "
                                 "chunks hold one layer fewer, down to none, e.g. Llama 3.1 405B over PP 16 x VP 8; "
                                 "megatron and meshplan only) (default: all three)"),
                 {"even", "balanced", "embedding-loss"});
  sub->add_flag("--sequence-parallel", a.sp_on, "Only plans with sequence parallelism");
  sub->add_flag("--no-sequence-parallel", a.sp_off, "Only plans without sequence parallelism");
  sub->add_flag("--dp-overlap", a.overlap_on, "Only plans that overlap DP communication");
  sub->add_flag("--no-dp-overlap", a.overlap_off, "Only plans that do not overlap it");
  sub->add_option("--max-tp", a.max_tp, "Largest tensor-parallel size (default: no limit)");
  sub->add_option("--max-pp", a.max_pp, "Largest pipeline-parallel size (default: no limit)");
  sub->add_option("--ep", a.ep, "Expert-parallel sizes to try, MoE models (default: divisors of the experts)");
  sub->add_option("--etp", a.etp, "Expert tensor-parallel sizes to try, MoE models (default: 1 and tp)");
}

}  // namespace

void add_plan_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* sub = app.add_subcommand(
      "plan", "Search every TP/PP/DP/ZeRO layout, rank by step time, explain and export");
  add_problem_options(sub, args->problem);
  add_narrowing_options(sub, *args);
  sub->add_option("--top", args->top, "How many candidates to keep (default 5)");
  allowed_values(sub->add_option("--objective", args->objective, "What to rank by (default step-time)"),
                 {"step-time", "tokens-per-s", "mfu", "cost"});
  sub->add_option("--dollars-per-gpu-hour", args->dollars_per_gpu_hour,
                  "Price for --objective cost (default: the profile's)");
  sub->add_flag("--explain", args->explain, "Rejections per rule and why #1 beats #2");
  sub->add_flag("--pareto", args->pareto, "Also list the memory vs throughput Pareto front");
  allowed_values(sub->add_option("--export", args->export_kind,
                                 "Print the best plan for a framework: megatron (args), deepspeed (JSON), fsdp or "
                                 "torchtitan (TOML), nemo (YAML), planned under that framework's rules; or a launch "
                                 "script: slurm | torchrun (Megatron-LM via torchrun), mpirun | srun (meshplan run)"),
                 {"megatron", "deepspeed", "fsdp", "torchtitan", "nemo", "slurm", "torchrun", "mpirun", "srun"});
  sub->add_flag("-q,--quiet,--no-progress", args->no_progress,
                "Never draw the progress bar (drawn on stderr when it is a terminal and the search runs over 1 s)");
  add_output_options(sub, args->output);
  sub->add_option("--html", args->html,
                  "Write a self-contained HTML report: Pareto front, memory and time breakdowns, timeline, accuracy");
  sub->footer("--output FILE writes the plan file (meshplan.plan/1 JSON) for simulate and run. "
              "Impossible problems print one line saying what would fit and exit 2.");
  sub->callback([args, &exit_code] { exit_code = run_plan(*args); });
}

}  // namespace meshplan::cli
