// Reading and writing a hardware profile's `fp8_rowwise_speedup` table (measured FP8 linear-layer speedups).
#pragma once
#include <nlohmann/json.hpp>

#include "core/hardware_profile.h"
#include "core/io_detail.h"

namespace meshplan::io_detail {

/// Reads gpu.fp8_rowwise_speedup (optional): {m: [...], k: [...], n: [...], speedup: [...]}, each axis
/// strictly ascending and positive, speedup m*k*n positive values with n varying fastest.
void read_fp8_rowwise_speedup(Reader& r, const YAML::Node& gpu, HardwareProfile& hw);

/// The same table as JSON; null when the profile has none.
nlohmann::ordered_json fp8_rowwise_speedup_json(const HardwareProfile& hw);

}  // namespace meshplan::io_detail
