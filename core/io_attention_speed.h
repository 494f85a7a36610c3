// Reading and writing a hardware profile's `attention_kernel_speed` list (published fused-attention speed curves).
#pragma once
#include <nlohmann/json.hpp>

#include "core/hardware_profile.h"
#include "core/io_detail.h"

namespace meshplan::io_detail {

/// Reads gpu.attention_kernel_speed (optional): a list of
///   {kernel: flash2|flash1|triton|cudnn, head_dim: 128, seq: [512, ...], tflops: [99, ...]}
/// with seq strictly ascending, as many tflops as seq, every value positive.
void read_attention_speeds(Reader& r, const YAML::Node& gpu, HardwareProfile& hw);

/// The same list as JSON (TFLOP/s), in the profile's order; empty array when the profile has none.
nlohmann::ordered_json attention_speeds_json(const HardwareProfile& hw);

}  // namespace meshplan::io_detail
