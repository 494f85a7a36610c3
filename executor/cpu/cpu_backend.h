// CpuBackend: the Backend on host memory; Eigen GEMMs and plain loops (fast paths have plain twins
// in cpu/reference.h, selected by CpuOptions so whole runs can be compared).
#pragma once
#include <vector>

#include "executor/backend.h"

namespace meshplan::exec {

class CpuBackend : public Backend {
 public:
  explicit CpuBackend(const CpuOptions& options) : options_(options) {}
  const char* name() const override { return "cpu"; }
  const CpuOptions& options() const { return options_; }

  void copy_from_host(void* dst, const void* host_src, uint64_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, uint64_t bytes) override;
  void copy(void* dst, const void* src, uint64_t bytes) override;

  void fill(float* x, float value, int64_t n) override;
  void scale(float* x, float a, int64_t n) override;
  void axpy(float* y, float a, const float* x, int64_t n) override;
  void add(float* out, const float* a, const float* b, int64_t n) override;
  double sum_squares(const float* x, int64_t n) override;
  double sum(const float* x, int64_t n) override;

  void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
            const float* A, const float* B, float beta, float* C) override;
  /// bf16 inputs widened into host scratch outside the tracker: a GPU's GEMM reads them as they
  /// are, so the widening is the emulation's, not the model's memory.
  void gemm_typed(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  GemmOperand A, GemmOperand B, float beta, float* C) override;
  void attention_forward_bf16(void* out, float* lse, float* probs, const void* q, const void* k, const void* v,
                              const AttentionDims& d) override;
  void attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const void* q, const void* k,
                               const void* v, const void* out, const float* lse, const float* probs,
                               const AttentionDims& d) override;
  void rmsnorm_forward_bf16(void* out, float* rstd, const float* x, const float* w, int64_t N, int64_t C,
                            float eps) override;
  void swiglu_forward_bf16(void* out, const float* gate, const float* up, int64_t n) override;
  void rope_forward_bf16(void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                         float theta) override;
  void to_bf16(void* dst, const float* src, int64_t n) override;
  void from_bf16(float* dst, const void* src, int64_t n) override;

  void embedding_forward(float* out, const int32_t* tokens, const float* table,
                         int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) override;
  void embedding_backward(float* dtable, const float* dout, const int32_t* tokens,
                          int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) override;
  void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, int64_t N,
                       int64_t C, float eps) override;
  void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x, const float* w,
                        const float* rstd, int64_t N, int64_t C) override;
  void rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta) override;
  void rope_backward(float* dx, int64_t B, int64_t T, int64_t H, int64_t D, float theta) override;
  void attention_forward(float* out, float* lse, float* probs, const float* q, const float* k,
                         const float* v, const AttentionDims& d) override;
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                          const float* k, const float* v, const float* out, const float* lse,
                          const float* probs, const AttentionDims& d) override;
  void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) override;
  void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                       const float* up, int64_t n) override;
  void ce_row_max(float* row_max, const float* logits, int64_t N, int64_t Vl) override;
  void ce_row_sumexp(float* sumexp, const float* logits, const float* row_max, int64_t N,
                     int64_t Vl) override;
  void ce_target_logit(float* target_logit, const float* logits, const int32_t* targets,
                       int64_t vocab_begin, int64_t N, int64_t Vl) override;
  void ce_merge_stats(float* row_max, float* sumexp, const float* chunk_max, const float* chunk_sumexp,
                      int64_t N) override;
  void ce_loss(float* loss, const float* row_max, const float* sumexp, const float* target_logit,
               int64_t N) override;
  void ce_backward(float* dlogits, const float* logits, const float* row_max, const float* sumexp,
                   const int32_t* targets, int64_t vocab_begin, float scale, int64_t N,
                   int64_t Vl) override;
  void adamw(float* param, const float* grad, float* m, float* v, int64_t n,
             const AdamWStep& s) override;

 protected:
  void* allocate_raw(uint64_t bytes) override;
  void free_raw(void* ptr, uint64_t bytes) override;

 private:
  CpuOptions options_;
  std::vector<float> widened_a_, widened_b_;  // gemm_typed's scratch
};

}  // namespace meshplan::exec
