// `meshplan validate`: predicts the published runs in validation/*.yaml and prints the error table.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/regime_note.h"
#include "cli/report.h"
#include "cli/report_json.h"
#include "core/io.h"
#include "core/units.h"
#include "costmodel/validate.h"
#include "meshplan_version.h"

namespace meshplan::cli {

namespace {

namespace fs = std::filesystem;

struct ValidateArgs {
  std::vector<std::string> files;  // empty: every *.yaml of the validation directory
  std::string dir;                 // empty: default_validation_dir()
  std::string hardware;            // empty: each file's `hardware:` profile
  std::string profiles_dir;
  OutputOptions output;
};

Result<std::vector<std::string>> input_files(const ValidateArgs& a) {
  if (!a.files.empty()) return a.files;
  const std::string dir = a.dir.empty() ? default_validation_dir() : a.dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return make_error("command line", "--dir", dir, "is not a directory",
                      "point --dir at a folder of validation YAML files (the repo's validation/)");
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".yaml" || e.path().extension() == ".yml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());  // deterministic order
  if (out.empty())
    return make_error("command line", "--dir", dir, "holds no .yaml files", "see validation/README.md");
  return out;
}

struct SetReport {
  ValidationSet set;
  std::string hardware;
  ValidationReport report;
};

Result<SetReport> predict_file(const ValidateArgs& a, const std::string& file) {
  auto set = load_validation(file);
  if (!set) return set.error();
  const std::string profile = a.hardware.empty() ? set.value().hardware : a.hardware;
  auto hw = load_hardware(profile, a.profiles_dir.empty() ? default_profiles_dir() : a.profiles_dir);
  if (!hw) return hw.error();
  ErrorList he = validate_hardware(hw.value());
  if (!he.empty()) return he.front();
  auto report = predict_set(set.value(), hw.value());
  if (!report) return report.error();
  return SetReport{set.value(), hw.value().name, report.value()};
}

ojson stats_object(const ErrorStats& s) {
  return {{"runs", s.runs},
          {"mean_abs_error", report_number(s.mean_abs_error)},
          {"max_abs_error", report_number(s.max_abs_error)},
          {"mean_signed_error", report_number(s.mean_signed_error)}};
}

ojson run_object(const RunPrediction& r) {
  ojson j = {{"label", r.label}, {"use", r.tuning ? "tuning" : r.regression.empty() ? "held-out" : "regression"}};
  if (!r.regression.empty()) j["regression"] = r.regression;
  if (!r.skipped.empty()) {
    j["skipped"] = r.skipped;
    return j;
  }
  j.update({{"published_s", report_number(r.published_s)},
            {"published_from", r.published_from},
            {"predicted_s", report_number(r.predicted_s)},
            {"error", report_number(r.error)},
            {"mfu", report_number(r.estimate.throughput.mfu)},
            {"hfu", report_number(r.estimate.throughput.hfu)},
            {"peak_bytes", report_bytes(r.estimate.memory.peak_bytes)},
            {"fits", r.estimate.fits},
            {"bottleneck", to_string(r.estimate.bottleneck)}});
  if (r.published_memory_bytes > 0)
    j.update({{"published_memory_bytes", report_bytes(r.published_memory_bytes)},
              {"memory_error", report_number(r.memory_error())}});
  return j;
}

// Runs whose source publishes peak memory: predicted peak against it (reported, not a target).
ErrorStats memory_stats(const std::vector<RunPrediction>& runs) {
  return error_stats(
      runs, [](const RunPrediction& r) { return r.published_memory_bytes > 0; },
      [](const RunPrediction& r) { return r.memory_error(); });
}

// Published runs (every one ran on its hardware) that the memory model says do not fit: each is a plan
// the planner would have refused.
std::vector<const RunPrediction*> not_fitting(const ValidationReport& all) {
  std::vector<const RunPrediction*> out;
  for (const RunPrediction& r : all.runs)
    if (r.skipped.empty() && !r.estimate.fits) out.push_back(&r);
  return out;
}

ojson validate_object(const std::vector<SetReport>& sets, const ValidationReport& all) {
  ojson j;
  j["schema"] = "meshplan.validate/1";  // keys added since: use, skipped, held_out, tuning, memory (+ per run
                                        // published_memory_bytes, memory_error), not_fitting, regression
  ojson list = ojson::array();
  for (const SetReport& s : sets) {
    ojson runs = ojson::array();
    for (const auto& r : s.report.runs) runs.push_back(run_object(r));
    list.push_back({{"name", s.set.name},
                    {"source", s.set.source},
                    {"hardware", s.hardware},
                    {"runs", runs},
                    {"mean_abs_error", report_number(s.report.mean_abs_error)},
                    {"max_abs_error", report_number(s.report.max_abs_error)},
                    {"held_out", stats_object(s.report.held_out)},
                    {"tuning", stats_object(s.report.tuning)},
                    {"regression", stats_object(s.report.regression)},
                    {"skipped", s.report.skipped}});
  }
  j["sets"] = list;
  j["runs"] = all.runs.size();
  j["mean_abs_error"] = report_number(all.mean_abs_error);
  j["max_abs_error"] = report_number(all.max_abs_error);
  j["held_out"] = stats_object(all.held_out);
  j["tuning"] = stats_object(all.tuning);
  j["regression"] = stats_object(all.regression);  // published figures their publisher calls a regression
  j["skipped"] = all.skipped;
  j["memory"] = stats_object(memory_stats(all.runs));  // runs with a published peak memory
  j["not_fitting"] = not_fitting(all).size();  // published runs predicted not to fit
  j["provenance"] = {{"tool", "meshplan"}, {"version", MESHPLAN_VERSION}, {"git_sha", MESHPLAN_GIT_SHA}};
  return j;
}

std::string percent(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", 100.0 * v);
  return buf;
}

std::string run_line(const RunPrediction& r) {
  char line[320];
  if (!r.skipped.empty()) {
    std::snprintf(line, sizeof line, "  %-34s skipped: %s\n", r.label.c_str(), r.skipped.c_str());
    return line;
  }
  std::snprintf(line, sizeof line, "  %-34s %11s%s %12s %8s %6.3f %6s %s\n", r.label.c_str(),
                format_number(r.published_s).c_str(), r.derived ? "*" : " ", format_number(r.predicted_s).c_str(),
                percent(r.error).c_str(), r.estimate.throughput.mfu, r.estimate.fits ? "yes" : "no",
                r.tuning ? "tuning" : r.regression.empty() ? "" : "regression (not scored)");
  std::string s = line;
  if (r.published_memory_bytes > 0) {
    std::snprintf(line, sizeof line, "  %-34s %10.1f GiB %8.1f GiB %8s   (peak memory per GPU)\n", "",
                  r.published_memory_bytes / kGiB, r.estimate.memory.peak_bytes / kGiB,
                  percent(r.memory_error()).c_str());
    s += line;
  }
  return s;
}

std::string stats_text(const char* what, const ErrorStats& st) {
  char line[160];
  if (st.runs == 0) return "";
  std::snprintf(line, sizeof line, "%s mean |error| %.2f%%, max %.2f%%, mean signed %+.2f%% over %d runs", what,
                100.0 * st.mean_abs_error, 100.0 * st.max_abs_error, 100.0 * st.mean_signed_error, st.runs);
  return line;
}

// One line per group (source file) for the runs of one use (held-out, tuning or regression).
std::string group_table(const std::vector<SetReport>& sets, ErrorStats ValidationReport::*use, const ErrorStats& total) {
  if (total.runs == 0) return "";
  std::string s =
      use == &ValidationReport::tuning ? "TUNING runs (a profile parameter was set on them; not an independent test):\n"
      : use == &ValidationReport::held_out
          ? "HELD-OUT runs (no parameter was set on them):\n"
          : "REGRESSION runs (their publisher reports these figures as a software regression; predicted, not "
            "scored):\n";
  char line[256];
  for (const SetReport& set : sets) {
    const ErrorStats& st = set.report.*use;
    if (st.runs == 0) continue;
    std::snprintf(line, sizeof line, "  %-40s %4d runs  mean |error| %6.2f%%  max %6.2f%%  signed %+7.2f%%\n",
                  set.set.name.c_str(), st.runs, 100.0 * st.mean_abs_error, 100.0 * st.max_abs_error,
                  100.0 * st.mean_signed_error);
    s += line;
  }
  std::snprintf(line, sizeof line, "  %-40s %4d runs  mean |error| %6.2f%%  max %6.2f%%  signed %+7.2f%%\n\n", "all",
                total.runs, 100.0 * total.mean_abs_error, 100.0 * total.max_abs_error, 100.0 * total.mean_signed_error);
  return s + line;
}

std::string validate_table(const std::vector<SetReport>& sets, const ValidationReport& all) {
  std::string s;
  char line[256];
  for (const SetReport& set : sets) {
    s += set.set.name + " (" + set.hardware + "): " + set.set.source + "\n";
    std::snprintf(line, sizeof line, "  %-34s %12s %12s %8s %6s %6s\n", "run", "published s", "predicted s",
                  "error", "MFU", "fits");
    s += line;
    for (const auto& r : set.report.runs) s += run_line(r);
    for (const std::string& t : {stats_text("held-out:", set.report.held_out), stats_text("tuning:", set.report.tuning),
                                 stats_text("regression (not scored):", set.report.regression)})
      if (!t.empty()) s += "  " + t + "\n";
    s += "\n";
  }
  s += group_table(sets, &ValidationReport::held_out, all.held_out);
  s += group_table(sets, &ValidationReport::tuning, all.tuning);
  s += group_table(sets, &ValidationReport::regression, all.regression);
  if (const ErrorStats m = memory_stats(all.runs); m.runs > 0) {
    std::snprintf(line, sizeof line,
                  "PEAK MEMORY per GPU, where the source publishes it (reported, not a target): %d runs, "
                  "mean |error| %.2f%%, max %.2f%%, mean signed %+.2f%%\n\n",
                  m.runs, 100.0 * m.mean_abs_error, 100.0 * m.max_abs_error, 100.0 * m.mean_signed_error);
    s += line;
  }
  if (const auto nf = not_fitting(all); !nf.empty()) {
    std::snprintf(line, sizeof line,
                  "FITS: %zu of these published runs (each ran on its hardware) are predicted not to fit:\n",
                  nf.size());
    s += line;
    for (const RunPrediction* r : nf) {
      std::snprintf(line, sizeof line, "  %-40s predicted peak %.1f GB of %.1f GB usable\n", r->label.c_str(),
                    r->estimate.memory.peak_bytes / 1e9, r->estimate.usable_memory_bytes / 1e9);
      s += line;
    }
    s += "\n";
  }
  if (all.skipped > 0) s += std::to_string(all.skipped) + " runs skipped (reasons above)\n";
  s += "(* published time derived from the source's tokens/s, TFLOP/s or MFU with its own FLOP formula)\n";
  return s;
}

int run_validate(const ValidateArgs& a) {
  if (auto f = check_format(a.output); !f) return report_error(f.error());
  auto files = input_files(a);
  if (!files) return report_error(files.error());
  std::vector<SetReport> sets;
  ValidationReport all;
  for (const std::string& file : files.value()) {
    auto r = predict_file(a, file);
    if (!r) return report_error(r.error());
    all.runs.insert(all.runs.end(), r.value().report.runs.begin(), r.value().report.runs.end());
    sets.push_back(std::move(r).value());
  }
  summarize(all);
  const ojson j = validate_object(sets, all);
  const std::string text = a.output.format == "json"   ? format_json(j.dump())
                           : a.output.format == "yaml" ? json_to_yaml(j.dump())
                                                       : validate_table(sets, all);
  if (auto w = emit(a.output, text); !w) return report_error(w.error());
  return kExitOk;
}

}  // namespace

void add_validate_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<ValidateArgs>();
  CLI::App* sub = app.add_subcommand(
      "validate", "Predict published training runs (validation/*.yaml) and print the error table");
  sub->add_option("files", a->files, "Validation files (default: every .yaml in --dir)");
  sub->add_option("--dir", a->dir, "Directory of validation files (default: shipped validation/)");
  sub->add_option("--hardware", a->hardware, "Use this profile for every run instead of each file's");
  sub->add_option("--profiles-dir", a->profiles_dir, "Directory of hardware profiles (default: shipped)");
  add_output_options(sub, a->output);
  sub->callback([a, &exit_code] { exit_code = run_validate(*a); });
}

}  // namespace meshplan::cli
