// The shipped validation runs as the accuracy notes read them, predicted once per content and cached.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "costmodel/regime.h"
#include "costmodel/validate.h"

namespace meshplan::cli {

/// Every readable validation run, predicted with its own profile: element i of each vector is run i's.
/// Only what the notes read survives the cache: RunPrediction's set, label, error, tuning, regression
/// and skipped (not its StepEstimate).
struct NoteRuns {
  std::vector<RunPrediction> runs;
  std::vector<Regime> regimes;        // regime_of(run's layout, MoE model)
  std::vector<std::string> hardware;  // the file's `hardware:` profile name
  std::vector<std::string> routing;   // ValidationRun::moe_routing
};

/// `compute()`'s answer for these validation and profile directories, from
/// <cache_dir>/validation-<dirs>.json when that file was written by this binary (binary_identity) from
/// the same bytes of every validation/*.yaml and profiles/*.yaml, else computed and written there. The
/// notes' numbers are the same either way (doubles are stored exactly); only the time differs (all
/// ~950 runs read and predicted: 0.7 s, against a few ms for the cached file).
NoteRuns cached_note_runs(const std::string& validation_dir, const std::string& profiles_dir,
                          const std::function<NoteRuns()>& compute);

/// The key cached_note_runs compares: the binary's identity and a hash of both directories' YAML files.
std::string note_runs_key(const std::string& validation_dir, const std::string& profiles_dir);

}  // namespace meshplan::cli
