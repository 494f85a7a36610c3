// CpuBf16Backend: the CPU backend with the rounding points of a bf16 mixed-precision GPU run
// (CpuOptions::bf16_emulation): GEMM inputs (working weights and activations) rounded to bf16 with
// fp32 accumulation and fp32 output, and the stored outputs of the embedding, RMSNorm, rotary,
// attention and SwiGLU rounded to bf16. Master weights, gradients, reductions, the loss and AdamW
// stay fp32. So CI tests bf16 numerics (loss close to fp32, not equal) without a GPU.
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
  bool keeps_bf16_gemm_stash() const override { return !options().fp32_gemm_stash; }
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
  void attention_forward(float* out, float* lse, float* probs, const float* q, const float* k, const float* v,
                         const AttentionDims& d) override {
    CpuBackend::attention_forward(out, lse, probs, q, k, v, d);
    round_to_bf16(out, d.B * d.T * d.NH * d.D);
  }
  void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) override {
    CpuBackend::swiglu_forward(out, gate, up, n);
    round_to_bf16(out, n);
  }

 private:
  std::vector<float> a16_, b16_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_bf16_backend(const CpuOptions& options) {
  return std::make_unique<CpuBf16Backend>(options);
}

}  // namespace meshplan::exec
