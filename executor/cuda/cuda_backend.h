// CudaBackend: the Backend on one CUDA device. fp32 tensors (the fp32 master weights are the
// parameters themselves), cuBLASLt GEMMs (bf16 inputs, fp32 accumulate and output by default), our
// kernels for everything else, one compute stream, memory from a caching DevicePool.
#pragma once
#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "executor/backend.h"
#include "executor/backend_factory.h"
#include "executor/cuda/device_pool.h"

namespace meshplan::exec {

struct GemmPlan;  // cuBLASLt descriptors + chosen algorithm of one GEMM shape (cuda_gemm.cpp)
class CudnnAttention;  // cuDNN SDPA graphs (cudnn_attention.h; only in builds with cuDNN)

class CudaBackend : public Backend {
 public:
  /// Selects the device (options.device, resolved by the factory), creates the compute stream, the
  /// cuBLASLt handle and its workspace.
  explicit CudaBackend(const CudaOptions& options);
  ~CudaBackend() override;
  const char* name() const override { return "cuda"; }
  const CudaOptions& options() const { return options_; }
  int device() const { return device_; }
  const std::string& device_name() const { return device_name_; }
  /// Every kernel, copy and GEMM of this backend is queued here (a non-blocking stream).
  cudaStream_t stream() const { return stream_; }
  DevicePool& pool() { return pool_; }
  void set_gemm_precision(GemmPrecision p) { options_.gemm = p; }

  void copy_from_host(void* dst, const void* host_src, uint64_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, uint64_t bytes) override;
  void copy(void* dst, const void* src, uint64_t bytes) override;
  void synchronize() override;

  void fill(float* x, float value, int64_t n) override;
  void scale(float* x, float a, int64_t n) override;
  void axpy(float* y, float a, const float* x, int64_t n) override;
  void add(float* out, const float* a, const float* b, int64_t n) override;
  double sum_squares(const float* x, int64_t n) override;
  double sum(const float* x, int64_t n) override;

  void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
            const float* A, const float* B, float beta, float* C) override;
  /// bf16-copy mode: inside the scope each distinct operand (pointer, elements) is copied to bf16
  /// once and the copy kept until the scope ends (cuda_gemm.cpp).
  void begin_gemm_operand_reuse() override;
  void end_gemm_operand_reuse() override;
  /// bf16-copy: a bf16 input goes to cuBLASLt as it is (no copy); fp32 ones are copied as in gemm().
  /// Other modes widen bf16 inputs to fp32 first (Backend's default).
  void gemm_typed(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                  GemmOperand A, GemmOperand B, float beta, float* C) override;
  /// Only bf16-copy rounds every operand to bf16 (to_bf16's rounding); FAST_16BF is cuBLASLt's.
  bool keeps_bf16_gemm_stash() const override { return options_.gemm == GemmPrecision::Bf16Copy; }
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
  /// One pass each (norm_embed_rope.cu, elementwise.cu): the fp32 value rounded on store.
  void rmsnorm_forward_bf16(void* out, float* rstd, const float* x, const float* w, int64_t N, int64_t C,
                            float eps) override;
  void rope_forward_bf16(void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                         float theta) override;
  void swiglu_forward_bf16(void* out, const float* gate, const float* up, int64_t n) override;
  void rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta) override;
  void rope_backward(float* dx, int64_t B, int64_t T, int64_t H, int64_t D, float theta) override;
  void attention_forward(float* out, float* lse, float* probs, const float* q, const float* k,
                         const float* v, const AttentionDims& d) override;
  void attention_backward(float* dq, float* dk, float* dv, const float* dout, const float* q,
                          const float* k, const float* v, const float* out, const float* lse,
                          const float* probs, const AttentionDims& d) override;
  /// Both attention paths recompute the softmax from lse (flash style).
  bool attention_backward_reads_probs() const override { return false; }
  /// Where cuDNN's SDPA runs (its q, k, v, o, dO are bf16 anyway): q, k, v and out stay bf16.
  bool keeps_bf16_attention_stash(const AttentionDims& d) override { return attention_uses_cudnn(d); }
  /// cuDNN on the bf16 tensors as they are (no copies); elsewhere Backend's widening default.
  void attention_forward_bf16(void* out, float* lse, float* probs, const void* q, const void* k, const void* v,
                              const AttentionDims& d) override;
  void attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const void* q, const void* k,
                               const void* v, const void* out, const float* lse, const float* probs,
                               const AttentionDims& d) override;
  /// Whether this shape runs on cuDNN's fused SDPA (options say cudnn, the build has it, and
  /// cuDNN has an engine for it); otherwise the fp32 reference kernels run.
  bool attention_uses_cudnn(const AttentionDims& d);
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
  // (trans_a, trans_b, M, N, K, precision, alignment of A, B, C in bytes): shapes repeat every
  // step, so descriptors and the heuristic's algorithm are built once per shape. Alignment is part
  // of the key because the model passes offsets into flat buffers (only 4-byte aligned at worst).
  using GemmPlanKey = std::tuple<int, int, int64_t, int64_t, int64_t, int, int, int, int>;
  GemmPlan& gemm_plan(const GemmPlanKey& key);
  void destroy_gemm_plans();
  void gemm_lt(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
               const void* A, const void* B, float beta, float* C, bool bf16_inputs);
  double reduce_to_host(const float* x, int64_t n, bool squares);
  /// bf16 copy of the fp32 operand x (n elements): the scope's kept copy when there is one, else a
  /// new one (kept when a scope is open, else owned by `transient`).
  const void* bf16_operand(const float* x, int64_t n, Tensor& transient);
  /// The bf16 operand of a typed input: itself when bf16, else bf16_operand's copy.
  const void* bf16_operand(GemmOperand x, int64_t n, Tensor& transient);
  void destroy_attention();  // cuda_attention.cpp

  CudaOptions options_;
  int device_ = 0;
  std::string device_name_;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  void* lt_workspace_ = nullptr;      // pool block outside the tracker (cuBLASLt scratch)
  uint64_t lt_workspace_bytes_ = 0;
  double* reduce_host_ = nullptr;     // pinned: the double a reduction returns
  DevicePool pool_;
  std::map<GemmPlanKey, GemmPlan*> gemm_plans_;
  CudnnAttention* cudnn_ = nullptr;   // created at the first attention call (cuDNN builds only)
  struct KeptOperand {
    const float* source = nullptr;
    int64_t elements = 0;
    Tensor bf16;
  };
  bool operand_reuse_ = false;             // inside begin/end_gemm_operand_reuse
  std::vector<KeptOperand> kept_operands_; // bf16 copies kept for the open scope (a few)
};

}  // namespace meshplan::exec
