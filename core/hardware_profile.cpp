// Accessors and validation for HardwareProfile.
#include "core/hardware_profile.h"

namespace meshplan {

double HardwareProfile::peak_flops_for(const std::string& dtype) const {
  auto it = peak_flops.find(dtype);
  return it == peak_flops.end() ? 0.0 : it->second;
}

static void require_positive(ErrorList& e, const std::string& file, const char* field, double v,
                             const char* hint) {
  if (!(v > 0.0))
    e.push_back(make_error(file, field, std::to_string(v), "must be positive", hint));
}

ErrorList validate_hardware(const HardwareProfile& hw) {
  ErrorList e;
  const std::string& f = hw.file;
  require_positive(e, f, "gpu.memory_gb", hw.memory_bytes, "HBM capacity in GB, e.g. 80");
  require_positive(e, f, "gpu.hbm_bandwidth_gb_per_s", hw.hbm_bytes_per_s, "e.g. 2039 for A100 80GB");
  require_positive(e, f, "node.gpus_per_node", hw.gpus_per_node, "e.g. 8");
  require_positive(e, f, "node.intra_node.bandwidth_gb_per_s", hw.intra_node.bandwidth_bytes_per_s,
                   "per-GPU NVLink or PCIe bandwidth in GB/s");
  require_positive(e, f, "network.inter_node.bandwidth_gb_per_s", hw.inter_node.bandwidth_bytes_per_s,
                   "per-GPU network bandwidth in GB/s, e.g. 25 for one HDR NIC per GPU");
  if (hw.peak_flops.empty())
    e.push_back(make_error(f, "gpu.peak_tflops", "", "no dtype listed", "add e.g. bf16: 312"));
  for (const auto& [dtype, v] : hw.peak_flops)
    if (!(v > 0.0))
      e.push_back(make_error(f, "gpu.peak_tflops." + dtype, std::to_string(v / 1e12),
                             "must be positive", "dense TFLOP/s from the datasheet"));
  if (hw.gemm_efficiency.empty())
    e.push_back(make_error(f, "gpu.gemm_efficiency", "", "no points",
                           "list {gflop: ..., efficiency: ...} points"));
  for (size_t i = 0; i < hw.gemm_efficiency.size(); ++i) {
    const auto& p = hw.gemm_efficiency[i];
    if (!(p.efficiency > 0.0 && p.efficiency <= 1.0) || !(p.flops > 0.0))
      e.push_back(make_error(f, "gpu.gemm_efficiency[" + std::to_string(i) + "]",
                             std::to_string(p.efficiency), "efficiency must be in (0, 1]",
                             "achieved/peak for a GEMM of that size"));
  }
  if (!(hw.sustained_clock_fraction > 0.0 && hw.sustained_clock_fraction <= 1.0))
    e.push_back(make_error(f, "gpu.sustained_clock_fraction", std::to_string(hw.sustained_clock_fraction),
                           "must be in (0, 1]", "sustained / burst tensor throughput, e.g. 0.888 for H100 at 700 W"));
  if (!(hw.fp8_gemm_relative_efficiency > 0.0))
    e.push_back(make_error(f, "gpu.fp8_gemm_relative_efficiency", std::to_string(hw.fp8_gemm_relative_efficiency),
                           "must be positive", "(FP8 GEMM TFLOP/s / FP8 peak) / (BF16 GEMM TFLOP/s / BF16 peak)"));
  if (hw.host_link.bandwidth_bytes_per_s < 0.0 ||
      (hw.host_link.bandwidth_bytes_per_s > 0.0 && !(hw.host_link.efficiency > 0.0 && hw.host_link.efficiency <= 1.0)))
    e.push_back(make_error(f, "node.host_link", std::to_string(hw.host_link.bandwidth_bytes_per_s / 1e9),
                           "needs bandwidth >= 0 and efficiency in (0, 1]", "e.g. {bandwidth_gb_per_s: 63, efficiency: 0.87}"));
  if (hw.reserved_memory_bytes >= hw.memory_bytes && hw.memory_bytes > 0)
    e.push_back(make_error(f, "gpu.reserved_memory_gb", std::to_string(hw.reserved_memory_bytes / 1e9),
                           "leaves no usable memory", "a few GB at most"));
  return e;
}

}  // namespace meshplan
