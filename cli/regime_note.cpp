// Accuracy note from the shipped validation data (costmodel/regime.h), for plan and estimate.
#include "cli/regime_note.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "cli/options.h"
#include "cli/validation_cache.h"
#include "core/io.h"
#include "costmodel/regime.h"
#include "costmodel/validate.h"

namespace meshplan::cli {

namespace fs = std::filesystem;

std::string default_validation_dir() {
  if (const char* env = std::getenv("MESHPLAN_VALIDATION"); env && *env) return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path installed = exe.parent_path().parent_path() / "share" / "meshplan" / "validation";
    if (fs::is_directory(installed, ec)) return installed.string();
  }
  return std::string(MESHPLAN_SOURCE_DIR) + "/validation";
}

namespace {
// Every readable validation file, predicted with its own profile; unreadable files are left out
// (the note is advice, `meshplan validate` reports their errors).
NoteRuns predict_all(const std::string& validation_dir, const std::string& profiles_dir) {
  NoteRuns out;
  const std::vector<std::string> files = list_yaml_files(validation_dir);
  // Each profile once: most files share a handful of them, and reading YAML is most of this note's time.
  std::map<std::string, std::optional<HardwareProfile>> profiles;
  for (const std::string& f : files) {
    auto set = load_validation(f);
    if (!set) continue;
    auto [it, added] = profiles.try_emplace(set.value().hardware);
    if (added)
      if (auto hw = load_hardware(set.value().hardware, profiles_dir)) it->second = std::move(hw.value());
    if (!it->second) continue;
    for (const ValidationRun& run : set.value().runs) {
      auto r = predict_run(set.value(), run, *it->second);
      if (!r) continue;
      const ModelSpec* m = set.value().find_model(run.model);
      out.runs.push_back(r.value());
      out.regimes.push_back(regime_of(run_config(run), m != nullptr && m->moe.enabled()));
      out.hardware.push_back(set.value().hardware);
      out.routing.push_back(run.moe_routing);
    }
  }
  return out;
}

// The same runs, from the cache when this binary already predicted these files (cli/validation_cache.h).
NoteRuns note_runs(const std::string& profiles_dir) {
  const std::string validation_dir = default_validation_dir();
  const std::string profiles = profiles_dir.empty() ? default_profiles_dir() : profiles_dir;
  return cached_note_runs(validation_dir, profiles, [&] { return predict_all(validation_dir, profiles); });
}
}  // namespace

namespace {
// The runs a note speaks for: the layout's regime, or, for a MoE layout whose own regime holds too few
// runs to judge, the MoE runs as a whole.
struct NoteBasis {
  std::string description;
  RegimeAccuracy accuracy;
};
NoteBasis note_basis(const ParallelConfig& cfg, bool moe_model, const std::vector<RunPrediction>& runs,
                     const std::vector<Regime>& regimes) {
  const Regime r = regime_of(cfg, moe_model);
  const RegimeAccuracy a = regime_accuracy(runs, regimes, r);
  if (!moe_model || a.runs >= kWeakRegimeMinRuns) return {describe(r), a};
  const Regime layout = regime_of(cfg, false);
  return {"MoE models as a whole (" + std::to_string(a.runs) + " of their runs at " + describe(layout) + ")",
          model_class_accuracy(runs, regimes, true)};
}
}  // namespace

namespace {
// Held-out accuracy of the runs costed on the profile named `name` (the files' `hardware:`).
RegimeAccuracy hardware_accuracy(const std::vector<RunPrediction>& runs, const std::vector<std::string>& hardware,
                                 const std::string& name) {
  std::vector<RunPrediction> on;
  for (size_t i = 0; i < runs.size() && i < hardware.size(); ++i)
    if (hardware[i] == name) on.push_back(runs[i]);
  return held_out_accuracy(on);
}
}  // namespace

namespace {
// Held-out accuracy of the runs whose source states `routing` (ValidationRun::moe_routing).
RegimeAccuracy routing_accuracy(const std::vector<RunPrediction>& runs, const std::vector<std::string>& routing,
                                const std::string& which) {
  std::vector<RunPrediction> with;
  for (size_t i = 0; i < runs.size() && i < routing.size(); ++i)
    if (routing[i] == which) with.push_back(runs[i]);
  return held_out_accuracy(with);
}
}  // namespace

std::string validation_regime_note(const ParallelConfig& cfg, bool moe_model, const std::string& profiles_dir,
                                   const std::string& hardware_name, bool balanced_routing) {
  const NoteRuns n = note_runs(profiles_dir);
  const std::vector<RunPrediction>& runs = n.runs;
  const std::vector<Regime>& regimes = n.regimes;
  const std::vector<std::string>& hardware = n.hardware;
  const std::vector<std::string>& routing = n.routing;
  const NoteBasis b = note_basis(cfg, moe_model, runs, regimes);
  std::string note = regime_note(b.description, b.accuracy);
  if (!hardware_name.empty()) {
    const std::string on = regime_note("runs on " + hardware_name, hardware_accuracy(runs, hardware, hardware_name));
    if (!on.empty()) note += (note.empty() ? "" : "\n") + on;
  }
  if (moe_model && balanced_routing) {
    const std::string r = routing_note(routing_accuracy(runs, routing, "natural"), routing_accuracy(runs, routing, "forced"));
    if (!r.empty()) note += (note.empty() ? "" : "\n") + r;
  }
  return note;
}

ValidationAccuracy validation_accuracy(const ParallelConfig& cfg, bool moe_model, const std::string& profiles_dir) {
  const NoteRuns n = note_runs(profiles_dir);
  const std::vector<RunPrediction>& runs = n.runs;
  const std::vector<Regime>& regimes = n.regimes;
  ValidationAccuracy a;
  const ErrorStats held = error_stats(runs, [](const RunPrediction& r) { return r.held_out() && r.skipped.empty(); });
  a.held_out_runs = held.runs;
  a.held_out_mean_abs_error = held.mean_abs_error;
  const NoteBasis b = note_basis(cfg, moe_model, runs, regimes);
  a.regime = b.description;
  a.in_regime = b.accuracy;
  a.note = regime_note(b.description, b.accuracy);
  return a;
}

}  // namespace meshplan::cli
