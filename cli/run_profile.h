// Which hardware profile `meshplan run --backend cpu` predicts with: CPU ranks are never compared
// with a GPU datasheet, but with a calibrated profile or one measured for this host and cached.
#pragma once
#include <string>

#include "core/error.h"
#include "core/hardware_profile.h"
#include "executor/comm.h"

namespace meshplan::cli {

/// The profile a run's prediction uses and where it came from (printed in the table and JSON).
struct PredictionProfile {
  HardwareProfile hardware;
  std::string source;  // "plan" | "cache" | "measured"
  std::string path;    // cache file for "cache"/"measured"; empty for "plan"
};

/// Collective over `world` (every rank gets the same answer):
/// - `plan_hw` is measured (provenance kind other than "datasheet"): it is used as is;
/// - else the cached <cache>/cpu-<host>-<ranks>ranks.yaml when it parses;
/// - else a quick calibration (executor/calibrate, as `calibrate --quick`) on these ranks (one rank:
///   two threads of this process), written to that cache file for the next run (cli/cache_files.h cache_dir).
Result<PredictionProfile> cpu_prediction_profile(const HardwareProfile& plan_hw, exec::Communicator& world,
                                                 bool announce);

}  // namespace meshplan::cli
