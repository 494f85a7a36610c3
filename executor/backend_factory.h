// Backend and device-communicator factory: `meshplan run/calibrate --backend cpu|cuda` pick a
// Backend by name here. Pure C++ (no CUDA headers), linkable in every build: without CUDA (the
// toolkit or NCCL missing at configure time, or MESHPLAN_WITH_CUDA=OFF) the "cuda" choices return
// one-line Errors instead of backends. MESHPLAN_HAVE_CUDA is defined (PUBLIC on the executor
// target) when the CUDA backend is compiled in.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/error.h"
#include "executor/backend.h"
#include "executor/comm.h"

namespace meshplan::exec {

struct ProcessGroups;

/// How the CUDA backend computes Backend::gemm on its fp32 tensors (cuBLASLt, fp32 accumulate and
/// fp32 output in every mode).
enum class GemmPrecision {
  Bf16,      // CUBLAS_COMPUTE_32F_FAST_16BF: inputs rounded to bf16 inside cuBLAS (runs at TF32's rate)
  Bf16Copy,  // the default: our kernel writes bf16 copies of A and B, bf16 x bf16 -> fp32 (tensor cores)
  Tf32,      // CUBLAS_COMPUTE_32F_FAST_TF32
  Fp32,      // CUBLAS_COMPUTE_32F on fp32 inputs: full fp32 (tests' tight comparisons)
};
const char* to_string(GemmPrecision p);
/// "bf16", "bf16-copy", "tf32", "fp32" (run --cuda-gemm).
std::optional<GemmPrecision> parse_gemm_precision(const std::string& s);

/// Which attention kernels the CUDA backend runs: cuDNN's fused SDPA (bf16 q/k/v/o on tensor
/// cores, fp32 softmax; needs a build with cuDNN and the cudnn-frontend headers) or our fp32
/// CUDA-core kernels (exact to 1e-4 of the CPU: the reference the fused path is tested against).
enum class CudaAttention { Cudnn, Reference };
const char* to_string(CudaAttention a);
std::optional<CudaAttention> parse_cuda_attention(const std::string& s);
/// True when this build has cuDNN's SDPA path compiled in (MESHPLAN_HAVE_CUDNN).
bool cudnn_attention_compiled();

struct CudaOptions {
  int device = -1;  // -1: the launcher's local rank (OMPI_COMM_WORLD_LOCAL_RANK, SLURM_LOCALID,
                    // MPI_LOCALRANKID, LOCAL_RANK) modulo the visible devices, else 0
  GemmPrecision gemm = GemmPrecision::Bf16Copy;  // real bf16 operands: see backend_precision
  /// Cudnn falls back to Reference in a build without cuDNN and for shapes cuDNN has no engine
  /// for (T = 1, head dim not a multiple of 8); effective_attention() says which ran.
  CudaAttention attention = CudaAttention::Cudnn;
  /// cuDNN's deterministic backward (bitwise repeatable; a B*NH*T*T*2-byte workspace on Hopper
  /// before cuDNN 9.25). Off by default, as PyTorch's SDPA: dQ is then accumulated with atomics.
  bool deterministic_attention = false;
};
/// The attention kernels a backend built with these options runs for supported shapes.
CudaAttention effective_attention(const CudaOptions& o);

/// True when this build has the CUDA backend compiled in.
bool cuda_compiled();
/// Visible CUDA devices; 0 without CUDA in the build, without a driver, or without a device.
int cuda_device_count();
/// Why there is no usable CUDA device ("this build has no CUDA backend", "no CUDA device: ...");
/// empty when cuda_device_count() > 0.
std::string cuda_unavailable_reason();

/// "cpu" or "cuda". Errors (one line, field --backend): unknown name, a build without CUDA, no
/// device. CPU options apply to "cpu", CUDA options to "cuda".
Result<std::unique_ptr<Backend>> make_backend(const std::string& name, const CpuOptions& cpu = {},
                                              const CudaOptions& cuda = {});

/// What a backend computes and stores in: the run report's `precision` key and the dtypes `run`
/// predicts with. Every backend keeps fp32 weights, activations, master weights, grads and Adam
/// state; the CUDA backend's GEMMs take bf16 inputs by default (CudaOptions::gemm).
struct BackendPrecision {
  std::string description;               // e.g. "fp32 weights/activations, bf16 GEMM inputs ..."
  std::string gemm_dtype = "fp32";       // whose peak FLOP/s the time prediction uses (the rate
                                         // that runs: tf32 for bf16 rounding of fp32 operands)
  std::string activation_dtype = "fp32"; // bytes per stored activation element
  /// Materialized keeps the (B, nh, T, T) probabilities (the CPU); Cudnn is cuDNN's fused SDPA;
  /// CudaFp32 our flash-style fp32 kernels (O(T) memory, no published speed).
  enum class Attention { Materialized, Cudnn, CudaFp32 };
  Attention attention = Attention::Materialized;
  /// The backend copies every GEMM operand to bf16 first (CUDA `--cuda-gemm bf16-copy`): the
  /// prediction counts those copies (costmodel/executor_ops.h executor_gemm_copy_bytes).
  bool gemm_operand_copies = false;
  /// The model keeps h1, h2 and act in bf16 (Backend::keeps_bf16_gemm_stash: the CPU's bf16
  /// emulation, CUDA's bf16-copy; executor/model/gemm_stash.h).
  bool bf16_gemm_stash = false;
  /// ... and q, k, v and the attention output (cuDNN's attention; the CPU's bf16 emulation).
  bool bf16_attention_stash = false;
};
/// "materialized", "cudnn", "cuda-fp32".
const char* to_string(BackendPrecision::Attention a);
BackendPrecision backend_precision(const std::string& backend_name, const CpuOptions& cpu = {},
                                   const CudaOptions& cuda = {});

/// Device memory of a CUDA backend (the pool and cudaMemGetInfo); all zero for other backends.
struct DeviceMemoryReport {
  bool is_device = false;
  uint64_t pool_peak_reserved_bytes = 0;  // high-water mark of bytes the pool held from cudaMalloc
  uint64_t pool_peak_in_use_bytes = 0;    // ... of bytes handed out (rounded sizes)
  uint64_t device_peak_used_bytes = 0;    // max (total - free) from cudaMemGetInfo, context included
  uint64_t device_total_bytes = 0;
  std::string device_name;
};
DeviceMemoryReport device_memory_report(Backend& backend);

/// The options a CUDA backend was built with (GEMM math, attention kernels), so that its selftest
/// checks what it will run; std::nullopt for any other backend.
std::optional<CudaOptions> cuda_options_of(const Backend& backend);
/// Starts new peaks (after initialisation, like MemoryTracker::reset_peak); no-op on the CPU.
void reset_device_memory_peaks(Backend& backend);

/// NCCL communicator over the same ranks as `host_group` (an MPI group, which it takes over: the
/// NCCL unique id is broadcast through it, and host-memory buffers passed to the result still go
/// through it). `p2p`: also build the pairwise communicators send/recv need (pipeline groups).
/// Error without CUDA or when `backend` is not the CUDA backend.
Result<std::unique_ptr<Communicator>> make_nccl_communicator(Backend& backend,
                                                             std::unique_ptr<Communicator> host_group,
                                                             const std::string& name, bool p2p);

/// For `meshplan run --backend cuda`: replaces groups.tp/dp/pp by NCCL communicators wrapping the
/// MPI ones (collective over the world, same order on every rank); groups.world stays MPI (the
/// trainer only passes it host memory). No-op for a CPU backend.
Result<bool> use_device_communicators(ProcessGroups& groups, Backend& backend);

}  // namespace meshplan::exec
