// The accuracy note of plan/estimate: how well the shipped validation runs in this regime were predicted.
#pragma once
#include <string>

#include "core/parallel_config.h"

namespace meshplan::cli {

/// Predicts the shipped validation runs (validation/, each with its own profile from `profiles_dir`)
/// and returns costmodel/regime.h's note for `cfg`'s regime, or "" when the model is not weak
/// there (or the validation data cannot be read). Computed at run time from the shipped data.
std::string validation_regime_note(const ParallelConfig& cfg, const std::string& profiles_dir);

/// $MESHPLAN_VALIDATION, else <binary>/../share/meshplan/validation, else the source tree's.
std::string default_validation_dir();

}  // namespace meshplan::cli
