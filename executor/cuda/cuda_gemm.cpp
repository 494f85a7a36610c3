// CudaBackend::gemm through cuBLASLt. The Backend contract is row-major C (M, N) = alpha op(A)
// op(B) + beta C; cuBLAS is column-major, where a row-major (r, c) matrix is its (c, r) transpose,
// so we compute C^T (N, M) = op(B)^T op(A)^T: cuBLASLt's "A" is our B and its "B" is our A.
// Precision (CudaOptions::gemm): Bf16 = CUBLAS_COMPUTE_32F_FAST_16BF on the fp32 tensors (inputs
// rounded to bf16 inside cuBLAS, fp32 accumulate and output); Bf16Copy = our kernel writes bf16
// copies of A and B and cuBLASLt multiplies bf16 x bf16 -> fp32 (the plain twin of Bf16); Tf32;
// Fp32 (plain fp32 math, for tight tests).
#include <cassert>
#include <cstdint>
#include <memory>
#include <string>

#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/launch.h"
#include "executor/cuda/lt_attributes.h"

namespace meshplan::exec {

struct GemmPlan {
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

namespace {

int alignment_bytes(const void* p) {
  const auto v = reinterpret_cast<uintptr_t>(p);
  int a = 4;
  while (a < 256 && v % (2 * a) == 0) a *= 2;
  return a;
}

cublasComputeType_t compute_type(GemmPrecision p) {
  switch (p) {
    case GemmPrecision::Bf16: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case GemmPrecision::Tf32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case GemmPrecision::Bf16Copy: return CUBLAS_COMPUTE_32F;
    case GemmPrecision::Fp32: return CUBLAS_COMPUTE_32F;  // fp32 inputs: no TF32 unless FAST_TF32
  }
  return CUBLAS_COMPUTE_32F;
}

}  // namespace

GemmPlan& CudaBackend::gemm_plan(const GemmPlanKey& key) {
  auto found = gemm_plans_.find(key);
  if (found != gemm_plans_.end()) return *found->second;
  const auto [trans_a, trans_b, M, N, K, precision, align_a, align_b, align_c] = key;
  const GemmPrecision prec = static_cast<GemmPrecision>(precision);
  const cudaDataType_t in_type = prec == GemmPrecision::Bf16Copy ? CUDA_R_16BF : CUDA_R_32F;
  auto plan = std::make_unique<GemmPlan>();
  CUBLAS_CHECK(cublasLtMatmulDescCreate(&plan->op, compute_type(prec), CUDA_R_32F));
  const cublasOperation_t op_lt_a = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt's A = our B
  const cublasOperation_t op_lt_b = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;  // Lt's B = our A
  lt::set_desc<CUBLASLT_MATMUL_DESC_TRANSA>(plan->op, static_cast<int32_t>(op_lt_a));
  lt::set_desc<CUBLASLT_MATMUL_DESC_TRANSB>(plan->op, static_cast<int32_t>(op_lt_b));
  // Stored (column-major) shapes: our B (K, N) row-major is (N, K) column-major, ld N; trans_b:
  // (N, K) row-major is (K, N) column-major, ld K. Likewise for A with M.
  if (!trans_b) CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, in_type, N, K, N));
  else CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->a, in_type, K, N, K));
  if (!trans_a) CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, in_type, K, M, K));
  else CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->b, in_type, M, K, M));
  CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_32F, N, M, N));

  cublasLtMatmulPreference_t pref = nullptr;
  CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
  // Types as cublasLt.h declares them (lt_attributes.h): workspace uint64_t, alignments uint32_t.
  lt::set_pref<CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES>(pref, uint64_t{lt_workspace_bytes_});
  lt::set_pref<CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES>(pref, static_cast<uint32_t>(align_b));
  lt::set_pref<CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES>(pref, static_cast<uint32_t>(align_a));
  lt::set_pref<CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES>(pref, static_cast<uint32_t>(align_c));
  lt::set_pref<CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES>(pref, static_cast<uint32_t>(align_c));
  cublasLtMatmulHeuristicResult_t result{};
  int found_count = 0;
  const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(lt_, plan->op, plan->a, plan->b, plan->c, plan->c,
                                                           pref, 1, &result, &found_count);
  cublasLtMatmulPreferenceDestroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || found_count == 0) {
    const std::string what = "no cuBLASLt algorithm for M=" + std::to_string(M) + " N=" + std::to_string(N) +
                             " K=" + std::to_string(K) + " trans_a=" + std::to_string(trans_a) +
                             " trans_b=" + std::to_string(trans_b) + " precision=" + to_string(prec);
    CUBLAS_CHECK(st);
    device_fail("cuBLAS", what, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
  }
  plan->algo = result.algo;
  GemmPlan* raw = plan.release();
  gemm_plans_.emplace(key, raw);
  return *raw;
}

void CudaBackend::destroy_gemm_plans() {
  for (auto& [key, plan] : gemm_plans_) {
    if (plan->a != nullptr) cublasLtMatrixLayoutDestroy(plan->a);
    if (plan->b != nullptr) cublasLtMatrixLayoutDestroy(plan->b);
    if (plan->c != nullptr) cublasLtMatrixLayoutDestroy(plan->c);
    if (plan->op != nullptr) cublasLtMatmulDescDestroy(plan->op);
    delete plan;
  }
  gemm_plans_.clear();
}

void CudaBackend::gemm_lt(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                          const void* A, const void* B, float beta, float* C, bool bf16_inputs) {
  const GemmPrecision prec = bf16_inputs ? GemmPrecision::Bf16Copy : options_.gemm;
  const GemmPlanKey key{trans_a, trans_b, M, N, K, static_cast<int>(prec),
                        alignment_bytes(A), alignment_bytes(B), alignment_bytes(C)};
  GemmPlan& plan = gemm_plan(key);
  CUBLAS_CHECK(cublasLtMatmul(lt_, plan.op, &alpha, B, plan.a, A, plan.b, &beta, C, plan.c, C, plan.c,
                              &plan.algo, lt_workspace_, lt_workspace_bytes_, stream_));
}

void CudaBackend::gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                       const float* A, const float* B, float beta, float* C) {
  assert(M >= 0 && N >= 0 && K >= 0);
  if (M == 0 || N == 0) return;
  if (K == 0) {  // empty sum: C = beta C (cuBLASLt rejects k = 0)
    if (beta == 0.0f) fill(C, 0.0f, M * N);
    else if (beta != 1.0f) scale(C, beta, M * N);
    return;
  }
  if (options_.gemm != GemmPrecision::Bf16Copy) {
    gemm_lt(trans_a, trans_b, M, N, K, alpha, A, B, beta, C, false);
    return;
  }
  // bf16 copies of the inputs (tracked): 2 bytes per element of A (M K) and B (K N), transient or
  // kept for an operand-reuse scope.
  gemm_typed(trans_a, trans_b, M, N, K, alpha, GemmOperand::f32(A), GemmOperand::f32(B), beta, C);
}

void CudaBackend::gemm_typed(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                             GemmOperand A, GemmOperand B, float beta, float* C) {
  if (options_.gemm != GemmPrecision::Bf16Copy || M == 0 || N == 0 || K == 0) {
    Backend::gemm_typed(trans_a, trans_b, M, N, K, alpha, A, B, beta, C);  // widen, then gemm()
    return;
  }
  Tensor a16, b16;
  const void* a = bf16_operand(A, M * K, a16);
  const void* b = bf16_operand(B, K * N, b16);
  gemm_lt(trans_a, trans_b, M, N, K, alpha, a, b, beta, C, true);
  // Inside a scope no GEMM may write another's operand: a kept copy would go stale.
#ifndef NDEBUG
  for (const KeptOperand& k : kept_operands_)
    assert((C + M * N <= k.source || k.source + k.elements <= C) && "GEMM output overlaps a kept operand");
#endif
}

const void* CudaBackend::bf16_operand(GemmOperand x, int64_t n, Tensor& transient) {
  if (x.dtype == DType::BF16) return x.data;
  assert(x.dtype == DType::F32 && "GEMM inputs are fp32 or bf16");
  return bf16_operand(static_cast<const float*>(x.data), n, transient);
}

void CudaBackend::to_bf16(void* dst, const float* src, int64_t n) {
  if (n > 0) cuda::to_bf16(stream_, dst, src, n);
}

void CudaBackend::from_bf16(float* dst, const void* src, int64_t n) {
  if (n > 0) cuda::from_bf16(stream_, dst, src, n);
}

const void* CudaBackend::bf16_operand(const float* x, int64_t n, Tensor& transient) {
  if (operand_reuse_) {
    for (const KeptOperand& k : kept_operands_)
      if (k.source == x && k.elements == n) return k.bf16.data();
  }
  Tensor copy(*this, DType::BF16, {n});
  cuda::to_bf16(stream_, copy.data(), x, n);
  const void* data = copy.data();
  if (operand_reuse_) kept_operands_.push_back(KeptOperand{x, n, std::move(copy)});
  else transient = std::move(copy);
  return data;
}

void CudaBackend::begin_gemm_operand_reuse() {
  assert(!operand_reuse_ && "operand-reuse scopes do not nest");
  operand_reuse_ = options_.gemm == GemmPrecision::Bf16Copy;  // the only mode that copies operands
}

void CudaBackend::end_gemm_operand_reuse() {
  operand_reuse_ = false;
  kept_operands_.clear();  // freed in stream order: the pool reuses them after the queued GEMMs
}

}  // namespace meshplan::exec
