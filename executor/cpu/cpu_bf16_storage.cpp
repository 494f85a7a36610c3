// CpuBackend's bf16 storage: conversions to and from 16-bit words, and GEMMs on bf16 inputs.
#include <cassert>
#include <cstdint>

#include "executor/cpu/bf16.h"
#include "executor/cpu/cpu_backend.h"

namespace meshplan::exec {

void CpuBackend::to_bf16(void* dst, const float* src, int64_t n) {
  uint16_t* out = static_cast<uint16_t*>(dst);
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_bits(src[i]);
}

void CpuBackend::from_bf16(float* dst, const void* src, int64_t n) {
  const uint16_t* in = static_cast<const uint16_t*>(src);
  for (int64_t i = 0; i < n; ++i) dst[i] = bf16_value(in[i]);
}

namespace {
const float* widened(CpuBackend& be, GemmOperand x, int64_t n, std::vector<float>& scratch) {
  if (x.dtype == DType::F32) return static_cast<const float*>(x.data);
  assert(x.dtype == DType::BF16 && "GEMM inputs are fp32 or bf16");
  scratch.resize(static_cast<size_t>(n));
  be.from_bf16(scratch.data(), x.data, n);
  return scratch.data();
}
}  // namespace

void CpuBackend::gemm_typed(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                            GemmOperand A, GemmOperand B, float beta, float* C) {
  const float* a = widened(*this, A, M * K, widened_a_);
  const float* b = widened(*this, B, K * N, widened_b_);
  gemm(trans_a, trans_b, M, N, K, alpha, a, b, beta, C);  // virtual: the emulation's rounding too
}

}  // namespace meshplan::exec
