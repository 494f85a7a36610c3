// Backend's generic bf16-input paths: the typed GEMM and the bf16 attention, by widening into fp32
// temporaries and calling the fp32 kernels.
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

namespace {
const float* widened_bf16(Backend& be, const void* x, int64_t n, Tensor& scratch) {
  scratch = Tensor(be, DType::F32, {n});
  be.from_bf16(scratch.f32(), x, n);
  return scratch.f32();
}
int64_t q_elements(const AttentionDims& d) { return d.B * d.T * d.NH * d.D; }
int64_t kv_elements(const AttentionDims& d) { return d.B * d.T * d.NKV * d.D; }
}  // namespace

void Backend::attention_forward_bf16(void* out, float* lse, float* probs, const void* q, const void* k,
                                     const void* v, const AttentionDims& d) {
  Tensor q32, k32, v32;
  Tensor o32(*this, DType::F32, {q_elements(d)});
  attention_forward(o32.f32(), lse, probs, widened_bf16(*this, q, q_elements(d), q32),
                    widened_bf16(*this, k, kv_elements(d), k32), widened_bf16(*this, v, kv_elements(d), v32), d);
  to_bf16(out, o32.f32(), q_elements(d));
}

void Backend::attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const void* q,
                                      const void* k, const void* v, const void* out, const float* lse,
                                      const float* probs, const AttentionDims& d) {
  Tensor q32, k32, v32, o32;
  attention_backward(dq, dk, dv, dout, widened_bf16(*this, q, q_elements(d), q32),
                     widened_bf16(*this, k, kv_elements(d), k32), widened_bf16(*this, v, kv_elements(d), v32),
                     widened_bf16(*this, out, q_elements(d), o32), lse, probs, d);
}

// The fused kernels' plain twins: the fp32 kernel into a temporary, then to_bf16.
void Backend::rmsnorm_forward_bf16(void* out, float* rstd, const float* x, const float* w, int64_t N, int64_t C,
                                   float eps) {
  Tensor wide(*this, DType::F32, {N * C});
  rmsnorm_forward(wide.f32(), rstd, x, w, N, C, eps);
  to_bf16(out, wide.f32(), N * C);
}

void Backend::swiglu_forward_bf16(void* out, const float* gate, const float* up, int64_t n) {
  Tensor wide(*this, DType::F32, {n});
  swiglu_forward(wide.f32(), gate, up, n);
  to_bf16(out, wide.f32(), n);
}

void Backend::rope_forward_bf16(void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                                float theta) {
  const int64_t n = B * T * H * D;
  Tensor wide(*this, DType::F32, {n});
  copy(wide.data(), x, static_cast<uint64_t>(n) * 4);
  rope_forward(wide.f32(), B, T, H, D, theta);
  to_bf16(out, wide.f32(), n);
}

}  // namespace meshplan::exec
