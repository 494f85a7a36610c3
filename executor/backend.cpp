// Backend's generic typed GEMM: bf16 inputs widened into fp32 temporaries, then gemm().
#include "executor/backend.h"

#include <cassert>

namespace meshplan::exec {

namespace {
// The fp32 view of one GEMM input of `n` elements: itself, or its widening into `scratch`.
const float* widened(Backend& be, GemmOperand x, int64_t n, Tensor& scratch) {
  if (x.dtype == DType::F32) return static_cast<const float*>(x.data);
  assert(x.dtype == DType::BF16 && "GEMM inputs are fp32 or bf16");
  scratch = Tensor(be, DType::F32, {n});
  be.from_bf16(scratch.f32(), x.data, n);
  return scratch.f32();
}
}  // namespace

void Backend::gemm_typed(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                         GemmOperand A, GemmOperand B, float beta, float* C) {
  Tensor a32, b32;
  const float* a = widened(*this, A, M * K, a32);
  const float* b = widened(*this, B, K * N, b32);
  gemm(trans_a, trans_b, M, N, K, alpha, a, b, beta, C);
}

}  // namespace meshplan::exec
