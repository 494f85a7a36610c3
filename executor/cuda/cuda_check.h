// CUDA_CHECK / CUBLAS_CHECK / NCCL_CHECK: every CUDA runtime, cuBLASLt and NCCL call of the CUDA
// backend goes through one of them. A failure throws DeviceError whose one-line message names the
// call, file:line, the library's own message and this process's rank (so a multi-rank log says
// which GPU failed).
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <string>

#include "executor/device_error.h"

namespace meshplan::exec {

/// "rank R" from the launcher's environment (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK,
/// SLURM_PROCID), or "rank ?" when launched alone.
std::string device_rank_label();

/// Throw DeviceError("meshplan: rank R: <lib> error at file:line: <call>: <message>").
[[noreturn]] void device_fail(const char* lib, const std::string& message, const char* call,
                              const char* file, int line);

void cuda_check(cudaError_t code, const char* call, const char* file, int line);
void cublas_check(cublasStatus_t code, const char* call, const char* file, int line);
void nccl_check(ncclResult_t code, const char* call, const char* file, int line);

}  // namespace meshplan::exec

#define CUDA_CHECK(call) ::meshplan::exec::cuda_check((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::meshplan::exec::cublas_check((call), #call, __FILE__, __LINE__)
#define NCCL_CHECK(call) ::meshplan::exec::nccl_check((call), #call, __FILE__, __LINE__)
/// After a kernel launch: launch-configuration errors surface here, at the launching line.
#define CUDA_CHECK_LAUNCH() ::meshplan::exec::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
