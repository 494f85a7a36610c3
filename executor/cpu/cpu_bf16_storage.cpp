// CpuBackend's bf16 storage: conversions to and from 16-bit words, GEMMs and attention on bf16
// tensors (widened into untracked host scratch: a GPU reads them as they are).
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

namespace {
std::vector<float> widen(CpuBackend& be, const void* x, int64_t n) {
  std::vector<float> v(static_cast<size_t>(n));
  be.from_bf16(v.data(), x, n);
  return v;
}
}  // namespace

void CpuBackend::attention_forward_bf16(void* out, float* lse, float* probs, const void* q, const void* k,
                                        const void* v, const AttentionDims& d) {
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  const auto q32 = widen(*this, q, nq), k32 = widen(*this, k, nkv), v32 = widen(*this, v, nkv);
  std::vector<float> o32(static_cast<size_t>(nq));
  attention_forward(o32.data(), lse, probs, q32.data(), k32.data(), v32.data(), d);
  to_bf16(out, o32.data(), nq);
}

void CpuBackend::attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const void* q,
                                         const void* k, const void* v, const void* out, const float* lse,
                                         const float* probs, const AttentionDims& d) {
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  const auto q32 = widen(*this, q, nq), k32 = widen(*this, k, nkv), v32 = widen(*this, v, nkv);
  const auto o32 = widen(*this, out, nq);
  attention_backward(dq, dk, dv, dout, q32.data(), k32.data(), v32.data(), o32.data(), lse, probs, d);
}

// The kernels with a bf16 output: the fp32 kernel (virtual: the emulation's rounding too) into host
// scratch, then narrowed; a GPU writes the bf16 output directly.
void CpuBackend::rmsnorm_forward_bf16(void* out, float* rstd, const float* x, const float* w, int64_t N, int64_t C,
                                      float eps) {
  std::vector<float> wide(static_cast<size_t>(N * C));
  rmsnorm_forward(wide.data(), rstd, x, w, N, C, eps);
  to_bf16(out, wide.data(), N * C);
}

void CpuBackend::swiglu_forward_bf16(void* out, const float* gate, const float* up, int64_t n) {
  std::vector<float> wide(static_cast<size_t>(n));
  swiglu_forward(wide.data(), gate, up, n);
  to_bf16(out, wide.data(), n);
}

void CpuBackend::rope_forward_bf16(void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                                   float theta) {
  const int64_t n = B * T * H * D;
  std::vector<float> wide(x, x + n);
  rope_forward(wide.data(), B, T, H, D, theta);
  to_bf16(out, wide.data(), n);
}

}  // namespace meshplan::exec
