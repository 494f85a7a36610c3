// Reading and writing a hardware profile's `fp8_attention_speedup` list (FP8 fused attention against 16-bit).
#pragma once
#include <nlohmann/json.hpp>

#include "core/hardware_profile.h"
#include "core/io_detail.h"

namespace meshplan::io_detail {

/// Reads gpu.fp8_attention_speedup (optional): a list of
///   {dtype: fp8|mxfp8, head_dim: 128, window: 0, version: 9.22.0, seq: [2048, ...], forward: [1.1, ...],
///    backward: [0.9, ...]}
/// with seq strictly ascending, as many forward and backward ratios as seq, every value positive; at most
/// one entry per (dtype, head_dim, window).
void read_fp8_attention_speedups(Reader& r, const YAML::Node& gpu, HardwareProfile& hw);

/// The same list as JSON, in the profile's order.
nlohmann::ordered_json fp8_attention_speedups_json(const HardwareProfile& hw);

}  // namespace meshplan::io_detail
