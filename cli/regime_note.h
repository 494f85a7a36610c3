// The accuracy note of plan/estimate: how well the shipped validation runs in this regime were predicted.
#pragma once
#include <string>

#include "core/parallel_config.h"
#include "costmodel/regime.h"

namespace meshplan::cli {

/// Predicts the shipped validation runs (validation/, each with its own profile from `profiles_dir`)
/// and returns costmodel/regime.h's note for the regime of `cfg` on a MoE (`moe_model`) or dense
/// model (for a MoE layout whose regime holds fewer than kWeakRegimeMinRuns runs: all MoE runs), or ""
/// when the model is not weak there (or the validation data cannot be read). Computed at run time
/// from the shipped data, or read from the cache of an earlier run on the same data (cli/validation_cache.h). With `hardware_name` (the job's profile, HardwareProfile::name), a second line
/// when the held-out runs costed on that profile are weak as a whole (the same rule: at least
/// kWeakRegimeMinRuns runs, mean |error| above kWeakRegimeMeanError): a profile's bias shows across
/// layouts (costmodel/README.md, thirty-first session: Blackwell rows 11-15 % too fast).
/// With `balanced_routing` (a MoE job costed with balanced expert loads, core/moe_load.h), one more line when
/// the held-out runs whose sources state natural routing are weak (costmodel/regime.h routing_note).
std::string validation_regime_note(const ParallelConfig& cfg, bool moe_model, const std::string& profiles_dir,
                                   const std::string& hardware_name = "", bool balanced_routing = false);

/// Held-out accuracy of the shipped validation runs: over all of them, and in `cfg`'s regime
/// (for the HTML report; same data and rules as the note).
struct ValidationAccuracy {
  int held_out_runs = 0;
  double held_out_mean_abs_error = 0;  // fraction, e.g. 0.07
  std::string regime;                  // describe(regime_of(cfg, moe)), e.g. "ZeRO 0-2 at DP 2-64"
  RegimeAccuracy in_regime;
  std::string note;                    // validation_regime_note's text ("" when not weak)
};
ValidationAccuracy validation_accuracy(const ParallelConfig& cfg, bool moe_model, const std::string& profiles_dir);

/// $MESHPLAN_VALIDATION, else <binary>/../share/meshplan/validation, else the source tree's.
std::string default_validation_dir();

}  // namespace meshplan::cli
