// GEMM and HBM probes of the CUDA calibration (executor/cuda only; the CLI calls calibrate_cuda).
#pragma once
#include <string>
#include <vector>

#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_calibrate.h"

namespace meshplan::exec {

/// Every (dtype, shape); unsupported dtypes are reported with supported = false. This rank only.
std::vector<CudaGemmMeasurement> probe_gemm_sweep(CudaBackend& backend, const std::vector<std::string>& dtypes,
                                                  const std::vector<GemmShape>& shapes, double target_s,
                                                  const ProgressFn& progress);

/// The sustained-clock soak (executor/calibrate/soak_probe.h) of one cuBLASLt GEMM of `dtype` and
/// shape `s` (the layout and data of the sweep), every rank of `group` at once; `burst_s_per_call` is
/// the sweep's time of that GEMM. An unsupported dtype or soak_s <= 0 returns "not measured".
SoakMeasurement probe_gemm_soak(CudaBackend& backend, Communicator& group, const std::string& dtype,
                                const GemmShape& s, double burst_s_per_call, double soak_s);

/// y = x over `bytes` per array: 2 * bytes moved per call; time from CUDA events. This rank only.
BandwidthMeasurement probe_hbm(CudaBackend& backend, int64_t bytes, double target_s);

/// nccl-tests style sweep of all-reduce, all-gather, reduce-scatter and ring send/recv on device
/// buffers through `group` (an NcclCommunicator built with p2p); collective over its ranks.
std::vector<CollectiveMeasurement> probe_nccl_sweep(CudaBackend& backend, Communicator& group,
                                                    const CollectiveSweep& sweep, const ProgressFn& progress);

}  // namespace meshplan::exec
