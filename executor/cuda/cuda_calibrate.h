// `meshplan calibrate --backend cuda`: what the CLI calls. Pure C++ (no CUDA headers) and linkable
// in every build: calibrate_cuda() returns an Error when the build has no CUDA or no device.
// Probes: cuBLASLt GEMM sweeps per dtype (bf16, fp16, fp8 e4m3 where the GPU has it, tf32, fp32),
// HBM bandwidth (a device copy kernel), and NCCL collective sweeps with nccl-tests' algbw/busbw
// over the ranks it is launched with (one GPU per rank).
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hardware_profile.h"
#include "executor/calibrate/calibration.h"

namespace meshplan::exec {

struct CudaCalibrationOptions {
  std::vector<std::string> dtypes = {"bf16", "fp16", "fp8", "tf32", "fp32"};
  int64_t gemm_max_n = 8192;          // largest square GEMM side (model-like shapes up to it too)
  double gemm_target_s = 0.05;        // repeats per shape last about this long
  int64_t hbm_bytes = 1ll << 30;      // per array of the copy probe (far beyond the L2)
  double soak_s = 30;                 // fastest bf16 GEMM back to back this long (0 = no soak)
  CollectiveSweep sweep;              // NCCL sweeps (need >= 2 ranks)
  ProgressFn progress;                // rank 0: progress bar
  /// With one rank no link can be measured: the profile's node and network sections are copied
  /// from this (datasheet) profile; without it a one-rank calibration is an Error.
  const HardwareProfile* base = nullptr;
};

/// One cuBLASLt GEMM, C (fp32, or bf16 for fp8) = A B, inputs of `dtype`, fp32 accumulation.
struct CudaGemmMeasurement {
  std::string dtype;
  GemmShape shape;
  bool supported = false;      // cuBLASLt had an algorithm for it on this GPU
  double time_s = 0;           // median of this rank's repeats, median over ranks
  double flops_per_s = 0;
  double max_rel_error = 0;    // sampled entries vs the exact product (inputs are exact in every
  bool verified = false;       // dtype, fp32 sums of them exact): <= 1e-6, fp8 <= 5e-2 (its
                               // tensor cores accumulate with fewer bits)
};

struct CudaCalibrationResult {
  /// What the CPU calibration reports too (so calibrate_report and calibrated_profile_yaml print it):
  /// gemm = the bf16 sweep (the dtype the CUDA executor computes in), memory = HBM copy bandwidth,
  /// collectives = NCCL sweeps, and their fits. cpu_name holds the GPU name.
  CalibrationResult common;
  std::string device_name;
  double device_memory_bytes = 0;
  int sm_count = 0;
  int compute_capability = 0;          // e.g. 90
  std::string nccl_version;            // e.g. "2.28.3"
  std::vector<CudaGemmMeasurement> gemm_all;     // every dtype
  std::map<std::string, double> peak_flops;      // best achieved FLOP/s per supported dtype
};

/// Square shapes n = 256 .. max_n (factor 2) plus model-like (tokens x hidden x 4 hidden) ones.
std::vector<GemmShape> default_cuda_gemm_shapes(int64_t max_n);

/// Runs every probe; collective over `world` (an MPI communicator, one rank per GPU). Errors: no
/// CUDA in the build, no device, one rank without options.base, an NCCL failure.
Result<CudaCalibrationResult> calibrate_cuda(Communicator& world, const CudaCalibrationOptions& options);

/// The profile plan/estimate/simulate read: achieved peaks per dtype, the bf16 GEMM efficiency
/// curve, HBM bandwidth (efficiency 1: achieved), device memory, NCCL link fits (one node: the
/// inter-node link repeats the intra-node fit; or the base profile's links at one rank).
HardwareProfile cuda_calibrated_profile(const CudaCalibrationResult& r, const CudaCalibrationOptions& o,
                                        const std::string& name, const std::string& date,
                                        const std::string& tool_version);

/// Implementation inside executor/cuda (compiled with MESHPLAN_HAVE_CUDA only): calibrate_cuda
/// checks the build and the device first, then calls this.
CudaCalibrationResult run_cuda_calibration(Communicator& world, const CudaCalibrationOptions& options);

}  // namespace meshplan::exec
