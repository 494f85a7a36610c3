// CpuBf16Backend: the CPU backend with the rounding points of a bf16 mixed-precision GPU run
// (CpuOptions::bf16_emulation): GEMM inputs (working weights and activations) rounded to bf16 with
// fp32 accumulation and fp32 output, the stored outputs of the embedding, RMSNorm, rotary,
// attention and SwiGLU rounded to bf16, and attention's inputs and gradients in bf16 as cuDNN's.
// Master weights, gradients, reductions, the loss and AdamW stay fp32. So CI tests bf16 numerics
// (loss close to fp32, not equal) without a GPU.
#include <memory>
#include <vector>

#include "executor/cpu/bf16.h"
#include "executor/cpu/cpu_backend.h"

namespace meshplan::exec {

namespace {

class CpuBf16Backend : public CpuBackend {
 public:
  using CpuBackend::CpuBackend;

  void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
            const float* B, float beta, float* C) override {
    // Host scratch for the bf16 copies (emulation only: not the model's memory, so not tracked).
    a16_.assign(A, A + M * K);
    b16_.assign(B, B + K * N);
    round_to_bf16(a16_.data(), M * K);
    round_to_bf16(b16_.data(), K * N);
    CpuBackend::gemm(trans_a, trans_b, M, N, K, alpha, a16_.data(), b16_.data(), beta, C);
  }
  /// Every fp32 operand is rounded to bf16 above (and a bf16 one is exact already).
  bool keeps_bf16_gemm_stash() const override { return !options().fp32_stash; }
  void embedding_forward(float* out, const int32_t* tokens, const float* table, int64_t vocab_begin, int64_t Vl,
                         int64_t N, int64_t C) override {
    CpuBackend::embedding_forward(out, tokens, table, vocab_begin, Vl, N, C);
    round_to_bf16(out, N * C);
  }
  void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, int64_t N, int64_t C,
                       float eps) override {
    CpuBackend::rmsnorm_forward(out, rstd, x, w, N, C, eps);
    round_to_bf16(out, N * C);
  }
  void rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta) override {
    CpuBackend::rope_forward(x, B, T, H, D, theta);
    round_to_bf16(x, B * T * H * D);
  }
  /// q, k, v, out (and dout, dq, dk, dv) are bf16 at cuDNN's SDPA, the GPU's attention: rounded here
  /// too. The model may then keep q, k, v and out as bf16 without changing a value.
  bool keeps_bf16_attention_stash(const AttentionDims&) override { return !options().fp32_stash; }
  void attention_forward(float* out, float* lse, float* probs, const float* q, const float* k, const float* v,
                         const AttentionDims& d) override {
    const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
    rounded(q16_, q, nq);
    rounded(k16_, k, nkv);
    rounded(v16_, v, nkv);
    CpuBackend::attention_forward(out, lse, probs, q16_.data(), k16_.data(), v16_.data(), d);
    round_to_bf16(out, nq);
  }
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q, const float* k,
                          const float* v, const float* out, const float* lse, const float* probs,
                          const AttentionDims& d) override {
    const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
    rounded(q16_, q, nq);
    rounded(k16_, k, nkv);
    rounded(v16_, v, nkv);
    rounded(o16_, out, nq);
    rounded(do16_, dout, nq);
    CpuBackend::attention_backward(dq, dk, dv, do16_.data(), q16_.data(), k16_.data(), v16_.data(), o16_.data(),
                                   lse, probs, d);
    round_to_bf16(dq, nq);
    round_to_bf16(dk, nkv);
    round_to_bf16(dv, nkv);
  }
  void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) override {
    CpuBackend::swiglu_forward(out, gate, up, n);
    round_to_bf16(out, n);
  }

 private:
  // Host scratch for bf16 roundings of inputs (emulation only: not tracked, as the GEMM's).
  static void rounded(std::vector<float>& dst, const float* src, int64_t n) {
    dst.assign(src, src + n);
    round_to_bf16(dst.data(), n);
  }
  std::vector<float> a16_, b16_, q16_, k16_, v16_, o16_, do16_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_bf16_backend(const CpuOptions& options) {
  return std::make_unique<CpuBf16Backend>(options);
}

}  // namespace meshplan::exec
