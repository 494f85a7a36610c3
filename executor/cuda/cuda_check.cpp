// Check helpers of the CUDA backend: one-line messages with rank, call, file:line and the
// library's own error string.
#include "executor/cuda/cuda_check.h"

#include <cstdlib>
#include <sstream>

namespace meshplan::exec {

std::string device_rank_label() {
  for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return std::string("rank ") + v;
  }
  return "rank ?";
}

void device_fail(const char* lib, const std::string& message, const char* call, const char* file,
                 int line) {
  std::ostringstream os;
  os << "meshplan: " << device_rank_label() << ": " << lib << " error at " << file << ":" << line
     << ": " << call << ": " << message;
  throw DeviceError(os.str());
}

void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next check reports its own call
  device_fail("CUDA", std::string(cudaGetErrorString(code)) + " (" + cudaGetErrorName(code) + ")", call,
              file, line);
}

void cublas_check(cublasStatus_t code, const char* call, const char* file, int line) {
  if (code == CUBLAS_STATUS_SUCCESS) return;
  device_fail("cuBLAS", std::string(cublasLtGetStatusString(code)) + " (" + cublasLtGetStatusName(code) + ")",
              call, file, line);
}

void nccl_check(ncclResult_t code, const char* call, const char* file, int line) {
  if (code == ncclSuccess) return;
  std::string msg = ncclGetErrorString(code);
  if (code == ncclSystemError || code == ncclRemoteError || code == ncclInternalError) {
    msg += " (set NCCL_DEBUG=WARN or INFO for NCCL's own reason)";
  }
  device_fail("NCCL", msg, call, file, line);
}

}  // namespace meshplan::exec
