// Accuracy note from the shipped validation data (costmodel/regime.h), for plan and estimate.
#include "cli/regime_note.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "cli/options.h"
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
void predict_all(const std::string& profiles_dir, std::vector<RunPrediction>& runs,
                 std::vector<ParallelConfig>& configs) {
  std::error_code ec;
  std::vector<std::string> files;
  for (const auto& e : fs::directory_iterator(default_validation_dir(), ec))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  // Each profile once: most files share a handful of them, and reading YAML is most of this note's time.
  std::map<std::string, std::optional<HardwareProfile>> profiles;
  for (const std::string& f : files) {
    auto set = load_validation(f);
    if (!set) continue;
    auto [it, added] = profiles.try_emplace(set.value().hardware);
    if (added)
      if (auto hw = load_hardware(set.value().hardware, profiles_dir.empty() ? default_profiles_dir() : profiles_dir))
        it->second = std::move(hw.value());
    if (!it->second) continue;
    for (const ValidationRun& run : set.value().runs) {
      auto r = predict_run(set.value(), run, *it->second);
      if (!r) continue;
      runs.push_back(r.value());
      configs.push_back(run_config(run));
    }
  }
}
}  // namespace

std::string validation_regime_note(const ParallelConfig& cfg, const std::string& profiles_dir) {
  std::vector<RunPrediction> runs;
  std::vector<ParallelConfig> configs;
  predict_all(profiles_dir, runs, configs);
  const Regime r = regime_of(cfg);
  return regime_note(r, regime_accuracy(runs, configs, r));
}

ValidationAccuracy validation_accuracy(const ParallelConfig& cfg, const std::string& profiles_dir) {
  std::vector<RunPrediction> runs;
  std::vector<ParallelConfig> configs;
  predict_all(profiles_dir, runs, configs);
  ValidationAccuracy a;
  const ErrorStats held = error_stats(runs, [](const RunPrediction& r) { return r.held_out() && r.skipped.empty(); });
  a.held_out_runs = held.runs;
  a.held_out_mean_abs_error = held.mean_abs_error;
  const Regime r = regime_of(cfg);
  a.regime = describe(r);
  a.in_regime = regime_accuracy(runs, configs, r);
  a.note = regime_note(r, a.in_regime);
  return a;
}

}  // namespace meshplan::cli
