// Reports of `meshplan calibrate`: the profile YAML with its raw curves, and a summary table.
#pragma once
#include <string>

#include "core/hardware_profile.h"
#include "executor/calibrate/calibration.h"

namespace meshplan::cli {

/// hardware_to_yaml(profile) followed by a `calibration:` section (schema meshplan.calibration/1)
/// holding every raw measurement and fit; parse_hardware ignores that section.
std::string calibrated_profile_yaml(const HardwareProfile& hw, const exec::CalibrationResult& r);

/// The same raw section as a JSON object text (for --format json).
std::string calibration_json(const HardwareProfile& hw, const exec::CalibrationResult& r);

/// Human summary: peak, GEMM efficiency points, bandwidth, collective table (algbw/busbw, nccl-tests
/// definitions), fits and their errors, verification.
std::string calibration_table(const HardwareProfile& hw, const exec::CalibrationResult& r,
                              const std::string& output_path);

}  // namespace meshplan::cli
