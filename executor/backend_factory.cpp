// make_backend("cpu" | "cuda") and the device-communicator factory; the CUDA parts compile only
// with MESHPLAN_HAVE_CUDA, otherwise every CUDA request is a one-line Error.
#include "executor/backend_factory.h"

#include <cstdlib>

#include "executor/mpi/process_groups.h"

#ifdef MESHPLAN_HAVE_CUDA
#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/nccl_comm.h"
#endif

namespace meshplan::exec {

const char* to_string(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::Bf16: return "bf16";
    case GemmPrecision::Bf16Copy: return "bf16-copy";
    case GemmPrecision::Tf32: return "tf32";
    case GemmPrecision::Fp32: return "fp32";
  }
  return "?";
}

std::optional<GemmPrecision> parse_gemm_precision(const std::string& s) {
  for (GemmPrecision p : {GemmPrecision::Bf16, GemmPrecision::Bf16Copy, GemmPrecision::Tf32, GemmPrecision::Fp32})
    if (s == to_string(p)) return p;
  return std::nullopt;
}

const char* to_string(BackendPrecision::Attention a) {
  switch (a) {
    case BackendPrecision::Attention::Materialized: return "materialized";
    case BackendPrecision::Attention::Cudnn: return "cudnn";
    case BackendPrecision::Attention::CudaFp32: return "cuda-fp32";
  }
  return "?";
}

const char* to_string(CudaAttention a) {
  switch (a) {
    case CudaAttention::Cudnn: return "cudnn";
    case CudaAttention::Reference: return "reference";
  }
  return "?";
}

std::optional<CudaAttention> parse_cuda_attention(const std::string& s) {
  if (s == "cudnn") return CudaAttention::Cudnn;
  if (s == "reference") return CudaAttention::Reference;
  return std::nullopt;
}

bool cudnn_attention_compiled() {
#ifdef MESHPLAN_HAVE_CUDNN
  return true;
#else
  return false;
#endif
}

CudaAttention effective_attention(const CudaOptions& o) {
  return cudnn_attention_compiled() ? o.attention : CudaAttention::Reference;
}

bool cuda_compiled() {
#ifdef MESHPLAN_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

namespace {

#ifdef MESHPLAN_HAVE_CUDA
// cudaGetDeviceCount without throwing: no driver / no device -> 0 and the runtime's reason.
int probe_devices(std::string* why) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    cudaGetLastError();
    if (why != nullptr) *why = std::string("no CUDA device: ") + cudaGetErrorString(e);
    return 0;
  }
  if (n == 0 && why != nullptr) *why = "no CUDA device: cudaGetDeviceCount found 0";
  return n;
}

// The launcher's local rank, so ranks of one node take different GPUs.
int local_rank_from_env() {
  for (const char* var : {"OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", "MPI_LOCALRANKID", "LOCAL_RANK"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return std::atoi(v);
  }
  return 0;
}
#endif

Error backend_error(const std::string& name, const std::string& message, const std::string& hint) {
  return make_error("command line", "--backend", name, message, hint);
}

}  // namespace

int cuda_device_count() {
#ifdef MESHPLAN_HAVE_CUDA
  return probe_devices(nullptr);
#else
  return 0;
#endif
}

std::string cuda_unavailable_reason() {
#ifdef MESHPLAN_HAVE_CUDA
  std::string why;
  return probe_devices(&why) > 0 ? std::string() : why;
#else
  return "this build has no CUDA backend (configured without the CUDA toolkit + NCCL, or with "
         "MESHPLAN_WITH_CUDA=OFF)";
#endif
}

Result<std::unique_ptr<Backend>> make_backend(const std::string& name, const CpuOptions& cpu,
                                              const CudaOptions& cuda) {
  if (name == "cpu") return make_cpu_backend(cpu);
  if (name != "cuda") return backend_error(name, "unknown backend", "use --backend cpu or --backend cuda");
#ifdef MESHPLAN_HAVE_CUDA
  std::string why;
  const int devices = probe_devices(&why);
  if (devices == 0) return backend_error(name, why, "run on a machine with an NVIDIA GPU, or use --backend cpu");
  CudaOptions resolved = cuda;
  if (resolved.device < 0) resolved.device = local_rank_from_env() % devices;
  if (resolved.device >= devices) {
    return backend_error(name, "device " + std::to_string(resolved.device) + " does not exist (" +
                                   std::to_string(devices) + " visible)",
                         "check CUDA_VISIBLE_DEVICES");
  }
  try {
    return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(resolved));
  } catch (const DeviceError& e) {
    return backend_error(name, e.what(), "check the driver with nvidia-smi");
  }
#else
  (void)cuda;
  return backend_error(name, cuda_unavailable_reason(), "rebuild on a machine with the CUDA toolkit and NCCL, or use --backend cpu");
#endif
}

BackendPrecision backend_precision(const std::string& backend_name, const CpuOptions& cpu, const CudaOptions& cuda) {
  BackendPrecision p;
  if (backend_name != "cuda") {
    // The emulation rounds to bf16 but computes fp32: the CPU's fp32 rate is what ran.
    p.description = cpu.bf16_emulation
                        ? "bf16 weights/activations/GEMM inputs (emulated on the CPU: fp32 math on bf16-rounded "
                          "values; the activations only GEMMs and attention read stored as bf16), fp32 master "
                          "weights, grads and Adam state"
                        : "fp32 weights, activations and GEMMs; fp32 master weights, grads and Adam state";
    p.bf16_gemm_stash = cpu.bf16_emulation && !cpu.fp32_stash;
    p.bf16_attention_stash = p.bf16_gemm_stash;
    return p;
  }
  switch (cuda.gemm) {
    // cuBLASLt's FAST_16BF on fp32 operands rounds them to bf16 but runs at TF32's rate: on one
    // H100 (2026-11-25) the 1.1B step took 0.5067 s in this mode and 0.5081 s in tf32 mode, and an
    // ncu profile of the same mode (issue 13) shows TF32 kernels. Real bf16 operands: Bf16Copy.
    case GemmPrecision::Bf16: p.gemm_dtype = "tf32"; break;
    case GemmPrecision::Bf16Copy:
      p.gemm_dtype = "bf16";
      p.gemm_operand_copies = true;
      p.bf16_gemm_stash = true;
      break;
    case GemmPrecision::Tf32: p.gemm_dtype = "tf32"; break;
    case GemmPrecision::Fp32: p.gemm_dtype = "fp32"; break;
  }
  const bool fused = effective_attention(cuda) == CudaAttention::Cudnn;
  p.attention = fused ? BackendPrecision::Attention::Cudnn : BackendPrecision::Attention::CudaFp32;
  p.bf16_attention_stash = fused;
  p.description = std::string(p.bf16_gemm_stash ? "fp32 weights and activations (GEMM-only ones stored as bf16), "
                                                 : "fp32 weights and activations, ") +
                  to_string(cuda.gemm) +
                  " GEMM inputs with fp32 accumulation (cuBLASLt); attention " +
                  (fused ? "by cuDNN's fused SDPA on bf16 q/k/v (kept in bf16 with its output) with fp32 softmax"
                         : "by fp32 CUDA-core kernels (flash style)") +
                  "; fp32 master weights, grads and Adam state";
  return p;
}

DeviceMemoryReport device_memory_report(Backend& backend) {
  DeviceMemoryReport r;
#ifdef MESHPLAN_HAVE_CUDA
  if (auto* cuda = dynamic_cast<CudaBackend*>(&backend)) {
    cuda->synchronize();  // also samples cudaMemGetInfo
    const DeviceMemoryStats& s = cuda->pool().stats();
    r.is_device = true;
    r.pool_peak_reserved_bytes = s.peak_reserved_bytes;
    r.pool_peak_in_use_bytes = s.peak_in_use_bytes;
    r.device_peak_used_bytes = s.peak_device_used_bytes;
    r.device_total_bytes = s.device_total_bytes;
    r.device_name = cuda->device_name();
  }
#else
  (void)backend;
#endif
  return r;
}

std::optional<CudaOptions> cuda_options_of(const Backend& backend) {
#ifdef MESHPLAN_HAVE_CUDA
  if (const auto* cuda = dynamic_cast<const CudaBackend*>(&backend)) return cuda->options();
#else
  (void)backend;
#endif
  return std::nullopt;
}

void reset_device_memory_peaks(Backend& backend) {
#ifdef MESHPLAN_HAVE_CUDA
  if (auto* cuda = dynamic_cast<CudaBackend*>(&backend)) {
    cuda->synchronize();
    cuda->pool().reset_peaks();
  }
#else
  (void)backend;
#endif
}

Result<std::unique_ptr<Communicator>> make_nccl_communicator(Backend& backend,
                                                             std::unique_ptr<Communicator> host_group,
                                                             const std::string& name, bool p2p) {
#ifdef MESHPLAN_HAVE_CUDA
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (cuda == nullptr) {
    return backend_error(backend.name(), "NCCL communicators need the CUDA backend", "use --backend cuda");
  }
  try {
    Communicator& host = *host_group;
    return std::unique_ptr<Communicator>(
        std::make_unique<NcclCommunicator>(host, std::move(host_group), *cuda, name, p2p));
  } catch (const DeviceError& e) {
    return make_error("NCCL", name, "", e.what(), "rerun with NCCL_DEBUG=INFO for NCCL's reason");
  }
#else
  (void)backend;
  (void)host_group;
  (void)p2p;
  return backend_error("cuda", cuda_unavailable_reason(), "use --backend cpu");
#endif
}

Result<bool> use_device_communicators(ProcessGroups& groups, Backend& backend) {
  if (std::string(backend.name()) != "cuda") return true;
  // Same order on every rank: NCCL initialisation is collective within each group.
  struct Slot {
    std::unique_ptr<Communicator>* comm;
    const char* name;
    bool p2p;
  };
  for (Slot s : {Slot{&groups.tp, "tp", false}, Slot{&groups.dp, "dp", false}, Slot{&groups.pp, "pp", true}}) {
    auto made = make_nccl_communicator(backend, std::move(*s.comm), s.name, s.p2p);
    if (!made) return made.error();
    *s.comm = std::move(made).value();
  }
  return true;
}

}  // namespace meshplan::exec
