// CudaBackend's attention: cuDNN's fused SDPA on bf16 copies of q, k, v (and o, dO) where the build
// and the shape allow it, else our fp32 flash-style kernels (attention_fwd.cu / attention_bwd.cu).
#include <string>

#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_check.h"
#include "executor/cuda/launch.h"
#include "executor/tensor.h"
#ifdef MESHPLAN_HAVE_CUDNN
#include "executor/cuda/cudnn_attention.h"
#endif

namespace meshplan::exec {

namespace {

void check_head_dim(const AttentionDims& d, const char* call) {
  if (d.D <= cuda::kMaxHeadDim) return;
  device_fail("meshplan", "head dimension " + std::to_string(d.D) + " > " + std::to_string(cuda::kMaxHeadDim) +
              " is not supported by the CUDA attention kernels", call, __FILE__, __LINE__);
}

int64_t q_elems(const AttentionDims& d) { return d.B * d.T * d.NH * d.D; }
int64_t kv_elems(const AttentionDims& d) { return d.B * d.T * d.NKV * d.D; }

}  // namespace

void CudaBackend::destroy_attention() {
#ifdef MESHPLAN_HAVE_CUDNN
  delete cudnn_;
#endif
  cudnn_ = nullptr;
}

bool CudaBackend::attention_uses_cudnn(const AttentionDims& d) {
#ifdef MESHPLAN_HAVE_CUDNN
  if (options_.attention != CudaAttention::Cudnn) return false;
  if (cudnn_ == nullptr) cudnn_ = new CudnnAttention(stream_, options_.deterministic_attention);
  return cudnn_->supports(d);
#else
  (void)d;
  return false;
#endif
}

void CudaBackend::attention_forward(float* out, float* lse, float* probs, const float* q,
                                    const float* k, const float* v, const AttentionDims& d) {
  if (d.B * d.T * d.NH == 0) return;
  // Kept probabilities (selftest, tests) only come from the reference kernel.
  if (probs != nullptr || !attention_uses_cudnn(d)) {
    check_head_dim(d, "attention_forward");
    cuda::attention_forward(stream_, out, lse, probs, q, k, v, d);
    return;
  }
#ifdef MESHPLAN_HAVE_CUDNN
  // bf16 copies: 2 bytes per element of q, k, v, o, transient (freed in stream order on return).
  Tensor qb(*this, DType::BF16, {q_elems(d)}), kb(*this, DType::BF16, {kv_elems(d)});
  Tensor vb(*this, DType::BF16, {kv_elems(d)}), ob(*this, DType::BF16, {q_elems(d)});
  cuda::to_bf16(stream_, qb.data(), q, q_elems(d));
  cuda::to_bf16(stream_, kb.data(), k, kv_elems(d));
  cuda::to_bf16(stream_, vb.data(), v, kv_elems(d));
  Tensor ws(*this, DType::BF16, {(cudnn_->forward_workspace_bytes(d) + 1) / 2});
  cudnn_->forward(ob.data(), lse, qb.data(), kb.data(), vb.data(), d, ws.empty() ? nullptr : ws.data());
  cuda::from_bf16(stream_, out, ob.data(), q_elems(d));
#endif
}

void CudaBackend::attention_backward(float* dq, float* dk, float* dv, const float* dout,
                                     const float* q, const float* k, const float* v, const float* out,
                                     const float* lse, const float* /*probs: recomputed from lse*/,
                                     const AttentionDims& d) {
  if (d.B * d.T * d.NH == 0) return;
  if (!attention_uses_cudnn(d)) {
    check_head_dim(d, "attention_backward");
    Tensor rowdot(*this, DType::F32, {cuda::attention_backward_scratch_floats(d)});
    cuda::attention_backward(stream_, dq, dk, dv, dout, q, k, v, lse, d, rowdot.f32());
    return;
  }
#ifdef MESHPLAN_HAVE_CUDNN
  const int64_t nq = q_elems(d), nkv = kv_elems(d);
  Tensor qb(*this, DType::BF16, {nq}), kb(*this, DType::BF16, {nkv}), vb(*this, DType::BF16, {nkv});
  Tensor ob(*this, DType::BF16, {nq}), dob(*this, DType::BF16, {nq});
  cuda::to_bf16(stream_, qb.data(), q, nq);
  cuda::to_bf16(stream_, kb.data(), k, nkv);
  cuda::to_bf16(stream_, vb.data(), v, nkv);
  cuda::to_bf16(stream_, ob.data(), out, nq);
  cuda::to_bf16(stream_, dob.data(), dout, nq);
  Tensor dqb(*this, DType::BF16, {nq}), dkb(*this, DType::BF16, {nkv}), dvb(*this, DType::BF16, {nkv});
  Tensor ws(*this, DType::BF16, {(cudnn_->backward_workspace_bytes(d) + 1) / 2});
  cudnn_->backward(dqb.data(), dkb.data(), dvb.data(), dob.data(), qb.data(), kb.data(), vb.data(), ob.data(),
                   lse, d, ws.empty() ? nullptr : ws.data());
  cuda::from_bf16(stream_, dq, dqb.data(), nq);
  cuda::from_bf16(stream_, dk, dkb.data(), nkv);
  cuda::from_bf16(stream_, dv, dvb.data(), nkv);
#endif
}

void CudaBackend::attention_forward_bf16(void* out, float* lse, float* probs, const void* q, const void* k,
                                         const void* v, const AttentionDims& d) {
  if (d.B * d.T * d.NH == 0) return;
  if (probs != nullptr || !attention_uses_cudnn(d)) {
    Backend::attention_forward_bf16(out, lse, probs, q, k, v, d);  // widened, fp32 kernels
    return;
  }
#ifdef MESHPLAN_HAVE_CUDNN
  Tensor ws(*this, DType::BF16, {(cudnn_->forward_workspace_bytes(d) + 1) / 2});
  cudnn_->forward(out, lse, q, k, v, d, ws.empty() ? nullptr : ws.data());
#endif
}

void CudaBackend::attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const void* q,
                                          const void* k, const void* v, const void* out, const float* lse,
                                          const float* probs, const AttentionDims& d) {
  (void)probs;  // kept probabilities are never read on CUDA: recomputed from lse
  if (d.B * d.T * d.NH == 0) return;
  if (!attention_uses_cudnn(d)) {
    Backend::attention_backward_bf16(dq, dk, dv, dout, q, k, v, out, lse, probs, d);
    return;
  }
#ifdef MESHPLAN_HAVE_CUDNN
  // Only dO (fp32 from the wo GEMM) is copied in, and dq, dk, dv out: 2 bytes per element each.
  const int64_t nq = q_elems(d), nkv = kv_elems(d);
  Tensor dob(*this, DType::BF16, {nq});
  cuda::to_bf16(stream_, dob.data(), dout, nq);
  Tensor dqb(*this, DType::BF16, {nq}), dkb(*this, DType::BF16, {nkv}), dvb(*this, DType::BF16, {nkv});
  Tensor ws(*this, DType::BF16, {(cudnn_->backward_workspace_bytes(d) + 1) / 2});
  cudnn_->backward(dqb.data(), dkb.data(), dvb.data(), dob.data(), q, k, v, out, lse, d,
                   ws.empty() ? nullptr : ws.data());
  cuda::from_bf16(stream_, dq, dqb.data(), nq);
  cuda::from_bf16(stream_, dk, dkb.data(), nkv);
  cuda::from_bf16(stream_, dv, dvb.data(), nkv);
#endif
}

}  // namespace meshplan::exec
