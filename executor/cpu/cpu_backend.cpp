// CpuBackend: host memory, copies, elementwise ops, and dispatch to the fast or plain GEMM/attention.
#include "executor/cpu/cpu_backend.h"

#include <cassert>
#include <cstdlib>
#include <cstring>
#include <new>

#include "executor/cpu/reference.h"

namespace meshplan::exec {

namespace {
constexpr uint64_t kAlignment = 64;  // cache line; Eigen's vectorised loads like it
}

std::unique_ptr<Backend> make_cpu_bf16_backend(const CpuOptions& options);  // cpu_bf16_backend.cpp

std::unique_ptr<Backend> make_cpu_backend(const CpuOptions& options) {
  if (options.bf16_emulation) return make_cpu_bf16_backend(options);
  return std::make_unique<CpuBackend>(options);
}

void* CpuBackend::allocate_raw(uint64_t bytes) {
  const uint64_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded);
  if (p == nullptr) throw std::bad_alloc();
  return p;
}

void CpuBackend::free_raw(void* ptr, uint64_t) { std::free(ptr); }

void CpuBackend::copy_from_host(void* dst, const void* src, uint64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_to_host(void* dst, const void* src, uint64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy(void* dst, const void* src, uint64_t bytes) {
  if (bytes > 0 && dst != src) std::memmove(dst, src, bytes);
}

void CpuBackend::fill(float* x, float value, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = value;
}
void CpuBackend::scale(float* x, float a, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= a;
}
void CpuBackend::axpy(float* y, float a, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
void CpuBackend::add(float* out, const float* a, const float* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}
double CpuBackend::sum_squares(const float* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(x[i]) * x[i];
  return s;
}
double CpuBackend::sum(const float* x, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

void CpuBackend::gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                      const float* A, const float* B, float beta, float* C) {
  if (options_.naive_gemm) {
    gemm_naive(trans_a, trans_b, M, N, K, alpha, A, B, beta, C);
  } else {
    gemm_eigen(trans_a, trans_b, M, N, K, alpha, A, B, beta, C);
  }
}

void CpuBackend::attention_forward(float* out, float* lse, float* probs, const float* q,
                                   const float* k, const float* v, const AttentionDims& d) {
  if (options_.reference_attention) {
    attention_forward_reference(out, lse, probs, q, k, v, d);
  } else {
    Tensor ws(*this, DType::F32, {attention_workspace_floats(d)});  // counted scratch
    attention_forward_eigen(out, lse, probs, q, k, v, d, ws.f32());
  }
}

void CpuBackend::attention_backward(float* dq, float* dk, float* dv, const float* dout,
                                    const float* q, const float* k, const float* v,
                                    const float* /*out: not needed*/, const float* lse,
                                    const float* probs, const AttentionDims& d) {
  if (options_.reference_attention) {
    attention_backward_reference(dq, dk, dv, dout, q, k, v, lse, d);
  } else {
    Tensor ws(*this, DType::F32, {attention_workspace_floats(d)});
    attention_backward_eigen(dq, dk, dv, dout, q, k, v, lse, probs, d, ws.f32());
  }
}

}  // namespace meshplan::exec
