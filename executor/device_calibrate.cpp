// calibrate_cuda (the CLI's entry, linkable without CUDA), the CUDA calibration's default shapes
// and the profile it writes. The probes themselves are in executor/cuda/.
#include <algorithm>
#include <sstream>

#include "executor/backend_factory.h"
#include "executor/cuda/cuda_calibrate.h"

#ifdef MESHPLAN_HAVE_CUDA
#include "executor/cuda/cuda_check.h"
#endif

namespace meshplan::exec {

std::vector<GemmShape> default_cuda_gemm_shapes(int64_t max_n) {
  std::vector<GemmShape> out;
  for (int64_t n = 256; n <= max_n; n *= 2) out.push_back({n, n, n});
  // Model-like: 4096 tokens through a hidden -> 4 hidden projection and back (x W^T shapes).
  for (int64_t h = 1024; h <= max_n; h *= 2) {
    out.push_back({4096, 4 * h, h});
    out.push_back({4096, h, 4 * h});
  }
  return out;
}

Result<CudaCalibrationResult> calibrate_cuda(Communicator& world, const CudaCalibrationOptions& o) {
  if (world.size() < 2 && o.base == nullptr) {
    return make_error("command line", "ranks", std::to_string(world.size()),
                      "one rank cannot measure links (NCCL sweeps need >= 2 ranks)",
                      "launch one rank per GPU (mpirun -np 2 or more), or pass --base <datasheet profile> to "
                      "take the node and network from it");
  }
  if (!cuda_compiled() || cuda_device_count() == 0) {
    return make_error("command line", "--backend", "cuda", cuda_unavailable_reason(),
                      "run on a machine with an NVIDIA GPU and a CUDA build, or use --backend cpu");
  }
#ifdef MESHPLAN_HAVE_CUDA
  try {
    return run_cuda_calibration(world, o);
  } catch (const DeviceError& e) {
    return make_error("command line", "--backend", "cuda", e.what(), "rerun with NCCL_DEBUG=INFO / check nvidia-smi");
  }
#else
  return make_error("command line", "--backend", "cuda", cuda_unavailable_reason(), "use --backend cpu");
#endif
}

HardwareProfile cuda_calibrated_profile(const CudaCalibrationResult& r, const CudaCalibrationOptions& o,
                                        const std::string& name, const std::string& date,
                                        const std::string& tool_version) {
  const CalibrationResult& c = r.common;
  HardwareProfile hw;
  hw.name = name;
  std::ostringstream src;
  src << "meshplan calibrate --backend cuda: " << c.ranks << " rank(s) on " << c.host << " (" << r.device_name
      << ", sm_" << r.compute_capability << ", NCCL " << r.nccl_version
      << "); cuBLASLt GEMM sweeps (fp32 accumulate), device copy-kernel bandwidth, NCCL collective sweeps "
         "(nccl-tests busbw) with alpha-beta least-squares fits";
  if (c.ranks < 2 && o.base != nullptr) src << "; node and network copied from " << o.base->name;
  else src << "; one node measured, so inter_node repeats the intra-node fit";
  hw.source = src.str();
  hw.provenance = Provenance{"calibrated", date, c.host, tool_version};
  hw.gpu = r.device_name;
  hw.compute_capability = r.compute_capability / 10.0;  // sm_90 -> 9.0 (costmodel/fp8.h transposes)
  hw.memory_bytes = r.device_memory_bytes;
  // What the CUDA context, NCCL and cuBLASLt hold is not measured separately here: keep the base
  // profile's allowances when given, else the datasheet profiles' usual 2.5 GB + 2 GB.
  hw.reserved_memory_bytes = o.base != nullptr ? o.base->reserved_memory_bytes : 2.5e9;
  hw.other_memory_bytes = o.base != nullptr ? o.base->other_memory_bytes : 2.0e9;
  for (const auto& [dtype, flops] : r.peak_flops) hw.peak_flops[dtype] = flops;
  hw.hbm_bytes_per_s = c.memory.bytes_per_s;
  hw.hbm_efficiency = 1.0;
  hw.gemm_efficiency = c.gemm_curve;
  hw.sustained_clock_fraction = c.soak.fraction;  // 1 when no soak ran (--soak-s 0)
  if (c.ranks >= 2) {
    hw.gpus_per_node = c.ranks_per_node;
    hw.intra_node = c.link.link;
    hw.inter_node = c.link.link;
    hw.dollars_per_gpu_hour = o.base != nullptr ? o.base->dollars_per_gpu_hour : 0.0;
  } else {
    hw.gpus_per_node = o.base->gpus_per_node;
    hw.intra_node = o.base->intra_node;
    hw.inter_node = o.base->inter_node;
    hw.dollars_per_gpu_hour = o.base->dollars_per_gpu_hour;
  }
  return hw;
}

}  // namespace meshplan::exec
