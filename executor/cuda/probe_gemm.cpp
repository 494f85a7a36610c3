// cuBLASLt GEMM sweep of `meshplan calibrate --backend cuda`: each dtype's own input types (not the
// backend's fp32 tensors), timed with CUDA events over batches of calls, verified on sampled
// entries against the exact product of the probe pattern.
#include "executor/cuda/probe_gemm.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/launch.h"
#include "executor/cuda/lt_attributes.h"

namespace meshplan::exec {

namespace {

struct TypeInfo {
  cuda::ProbeType probe;
  cudaDataType_t in;
  cudaDataType_t out;
  cublasComputeType_t compute;
  int in_bytes;
};

bool type_info(const std::string& dtype, TypeInfo* t) {
  if (dtype == "bf16") *t = {cuda::ProbeType::BF16, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2};
  else if (dtype == "fp16") *t = {cuda::ProbeType::F16, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 2};
  else if (dtype == "fp8") *t = {cuda::ProbeType::FP8E4M3, CUDA_R_8F_E4M3, CUDA_R_32F, CUBLAS_COMPUTE_32F, 1};
  else if (dtype == "tf32") *t = {cuda::ProbeType::F32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
  else if (dtype == "fp32") *t = {cuda::ProbeType::F32, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
  else return false;
  return true;
}

// One prepared GEMM: D (m x n, column-major) = A^T B with A stored (k x m), B (k x n) ("TN", the
// layout fp8 requires), m = shape.N, n = shape.M, k = shape.K.
struct Prepared {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo{};
  bool ok = false;
  ~Prepared() {
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (d) cublasLtMatrixLayoutDestroy(d);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

void prepare(cublasLtHandle_t lt, const TypeInfo& t, const GemmShape& s, uint64_t workspace, Prepared& p) {
  const uint64_t m = s.N, n = s.M, k = s.K;
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.op, t.compute, CUDA_R_32F));
  lt::set_desc<CUBLASLT_MATMUL_DESC_TRANSA>(p.op, static_cast<int32_t>(CUBLAS_OP_T));
  lt::set_desc<CUBLASLT_MATMUL_DESC_TRANSB>(p.op, static_cast<int32_t>(CUBLAS_OP_N));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.a, t.in, k, m, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.b, t.in, k, n, k));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&p.d, t.out, m, n, m));
  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  lt::set_pref<CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES>(pref, uint64_t{workspace});
  cublasLtMatmulHeuristicResult_t r{};
  int found = 0;
  // An unsupported type combination (fp8 before Hopper/Ada) is a finding, not an error.
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt, p.op, p.a, p.b, p.d, p.d, pref, 1, &r, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  p.ok = st == CUBLAS_STATUS_SUCCESS && found > 0;
  if (p.ok) p.algo = r.algo;
}

// Largest relative error of sampled entries of D against the exact product of the patterns.
double sampled_error(const float* d_host_sample, const std::vector<std::pair<int64_t, int64_t>>& at,
                     const GemmShape& s) {
  double worst = 0;
  for (size_t e = 0; e < at.size(); ++e) {
    const auto [i, j] = at[e];  // D row i (0..m), column j (0..n)
    double ref = 0;
    for (int64_t p = 0; p < s.K; ++p)
      ref += static_cast<double>(cuda::probe_pattern_value(p + i * s.K, 1)) * cuda::probe_pattern_value(p + j * s.K, 2);
    worst = std::max(worst, std::fabs(d_host_sample[e] - ref) / std::max(1.0, std::fabs(ref)));
  }
  return worst;
}

}  // namespace

std::vector<CudaGemmMeasurement> probe_gemm_sweep(CudaBackend& backend, const std::vector<std::string>& dtypes,
                                                  const std::vector<GemmShape>& shapes, double target_s,
                                                  const ProgressFn& progress) {
  cudaStream_t stream = backend.stream();
  cublasLtHandle_t lt = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&lt));
  const uint64_t ws_bytes = 32ull << 20;
  void* ws = backend.allocate(ws_bytes);
  cudaEvent_t e0 = nullptr, e1 = nullptr;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<CudaGemmMeasurement> out;
  const double total = static_cast<double>(dtypes.size() * shapes.size());
  int done = 0;
  for (const std::string& dtype : dtypes) {
    TypeInfo base{};
    if (!type_info(dtype, &base)) continue;
    for (const GemmShape& s : shapes) {
      TypeInfo t = base;  // the fp8 fallback below changes the output type of one shape only
      if (progress) progress(done++ / total, "GEMM " + dtype + " " + std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K));
      CudaGemmMeasurement m;
      m.dtype = dtype;
      m.shape = s;
      auto p = std::make_unique<Prepared>();
      prepare(lt, t, s, ws_bytes, *p);
      if (!p->ok && t.probe == cuda::ProbeType::FP8E4M3) {  // some fp8 kernels only write bf16
        t.out = CUDA_R_16BF;
        p = std::make_unique<Prepared>();
        prepare(lt, t, s, ws_bytes, *p);
      }
      m.supported = p->ok;
      if (!p->ok) {
        out.push_back(m);
        continue;
      }
      const uint64_t a_bytes = static_cast<uint64_t>(s.K * s.N) * t.in_bytes;
      const uint64_t b_bytes = static_cast<uint64_t>(s.K * s.M) * t.in_bytes;
      const int d_elem = t.out == CUDA_R_16BF ? 2 : 4;
      const uint64_t d_bytes = static_cast<uint64_t>(s.M * s.N) * d_elem;
      void* A = backend.allocate(a_bytes);
      void* B = backend.allocate(b_bytes);
      char* D = static_cast<char*>(backend.allocate(d_bytes));
      cuda::fill_pattern(stream, A, s.K * s.N, t.probe, 1);
      cuda::fill_pattern(stream, B, s.K * s.M, t.probe, 2);
      const float alpha = 1.0f, beta = 0.0f;
      auto call = [&] {
        CUBLAS_CHECK(cublasLtMatmul(lt, p->op, &alpha, A, p->a, B, p->b, &beta, D, p->d, D, p->d, &p->algo, ws,
                                    ws_bytes, stream));
      };
      // Warm-up (also the verified result), then batches sized to last target_s / 3 each.
      call();
      std::vector<std::pair<int64_t, int64_t>> at;
      for (int e = 0; e < 8; ++e) at.emplace_back((e * 7919) % s.N, (e * 104729) % s.M);
      std::vector<float> sample(at.size());
      for (size_t e = 0; e < at.size(); ++e) {
        const int64_t index = at[e].first + at[e].second * s.N;
        uint32_t bits = 0;  // fp32, or bf16 = the upper half of an fp32
        backend.copy_to_host(&bits, D + index * d_elem, d_elem);
        if (d_elem == 2) bits <<= 16;
        std::memcpy(&sample[e], &bits, sizeof(float));
      }
      m.max_rel_error = sampled_error(sample.data(), at, s);
      // Exact in fp32 accumulation; Hopper's fp8 tensor cores accumulate with fewer bits (about 14
      // mantissa bits, DeepSeek-V3 report sec. 3.3.2), so fp8 gets a loose bound.
      m.verified = m.max_rel_error <= (dtype == "fp8" ? 5e-2 : 1e-6);
      CUDA_CHECK(cudaEventRecord(e0, stream));
      call();
      CUDA_CHECK(cudaEventRecord(e1, stream));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      const int iters = std::clamp(static_cast<int>(target_s / 3 / std::max(1e-6, ms * 1e-3)), 1, 1000);
      std::vector<double> per_call;
      for (int batch = 0; batch < 3; ++batch) {
        CUDA_CHECK(cudaEventRecord(e0, stream));
        for (int i = 0; i < iters; ++i) call();
        CUDA_CHECK(cudaEventRecord(e1, stream));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        per_call.push_back(ms * 1e-3 / iters);
      }
      std::sort(per_call.begin(), per_call.end());
      m.time_s = per_call[1];
      m.flops_per_s = s.flops() / m.time_s;
      backend.deallocate(D, d_bytes);
      backend.deallocate(B, b_bytes);
      backend.deallocate(A, a_bytes);
      out.push_back(m);
    }
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  backend.deallocate(ws, ws_bytes);
  cublasLtDestroy(lt);
  return out;
}

SoakMeasurement probe_gemm_soak(CudaBackend& backend, Communicator& group, const std::string& dtype,
                                const GemmShape& s, double burst_s_per_call, double soak_s) {
  TypeInfo t{};
  if (!type_info(dtype, &t) || !(soak_s > 0.0)) return SoakMeasurement{};
  cudaStream_t stream = backend.stream();
  cublasLtHandle_t lt = nullptr;
  CUBLAS_CHECK(cublasLtCreate(&lt));
  const uint64_t ws_bytes = 32ull << 20;
  void* ws = backend.allocate(ws_bytes);
  Prepared p;
  prepare(lt, t, s, ws_bytes, p);
  SoakMeasurement m;
  if (p.ok) {
    const uint64_t a_bytes = static_cast<uint64_t>(s.K * s.N) * t.in_bytes;
    const uint64_t b_bytes = static_cast<uint64_t>(s.K * s.M) * t.in_bytes;
    const uint64_t d_bytes = static_cast<uint64_t>(s.M * s.N) * 4;
    void* A = backend.allocate(a_bytes);
    void* B = backend.allocate(b_bytes);
    void* D = backend.allocate(d_bytes);
    // The sweep's pattern: a GEMM's power draw depends on its data (ml-engineering's benchmarks
    // README, "Input data affects measured performance"), so the soak multiplies the same values.
    cuda::fill_pattern(stream, A, s.K * s.N, t.probe, 1);
    cuda::fill_pattern(stream, B, s.K * s.M, t.probe, 2);
    cudaEvent_t e0 = nullptr, e1 = nullptr;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    const float alpha = 1.0f, beta = 0.0f;
    auto batch = [&](int n) {
      CUDA_CHECK(cudaEventRecord(e0, stream));
      for (int i = 0; i < n; ++i)
        CUBLAS_CHECK(cublasLtMatmul(lt, p.op, &alpha, A, p.a, B, p.b, &beta, D, p.d, D, p.d, &p.algo, ws, ws_bytes,
                                    stream));
      CUDA_CHECK(cudaEventRecord(e1, stream));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
      return static_cast<double>(ms) * 1e-3;
    };
    m = run_soak_probe(group, batch, burst_s_per_call, soak_s);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    backend.deallocate(D, d_bytes);
    backend.deallocate(B, b_bytes);
    backend.deallocate(A, a_bytes);
  }
  backend.deallocate(ws, ws_bytes);
  cublasLtDestroy(lt);
  return m;
}

}  // namespace meshplan::exec
