// Backend: the device interface the model, optimizer and trainer call (memory, copies, GEMM and
// the training kernels). executor/cpu implements it with Eigen; a CUDA backend adds executor/cuda/
// files implementing the same virtuals. Callers never dereference device pointers.
#pragma once
#include <cstdint>
#include <memory>

#include "executor/tensor.h"

namespace meshplan::exec {

/// One AdamW update's scalars (bias corrections precomputed by the optimizer).
struct AdamWStep {
  float lr = 0;
  float beta1 = 0.9f;
  float beta2 = 0.95f;
  float eps = 1e-8f;
  float weight_decay = 0;      // decoupled: p -= lr * wd * p
  float bias_correction1 = 1;  // 1 - beta1^t
  float bias_correction2 = 1;  // 1 - beta2^t
};

/// Dimensions of one causal GQA attention call (the TP-local heads).
struct AttentionDims {
  int64_t B = 0;    // sequences
  int64_t T = 0;    // tokens per sequence
  int64_t NH = 0;   // query heads
  int64_t NKV = 0;  // key/value heads; NH % NKV == 0, query head h uses kv head h / (NH / NKV)
  int64_t D = 0;    // head dimension
};

/// A GEMM input on the device: fp32, or bf16 (an activation the model keeps in 16 bits).
struct GemmOperand {
  const void* data = nullptr;
  DType dtype = DType::F32;
  static GemmOperand f32(const float* p) { return GemmOperand{p, DType::F32}; }
  static GemmOperand of(const Tensor& t) { return GemmOperand{t.data(), t.dtype()}; }
};

/// All pointers are device pointers of the backend; sizes are element counts. Kernels that
/// "accumulate" add into their output (+=), the others overwrite it. Row-major everywhere.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;

  // ---- memory: every byte goes through allocate/deallocate so memory() sees it ----
  void* allocate(uint64_t bytes);
  void deallocate(void* ptr, uint64_t bytes);
  MemoryTracker& memory() { return memory_; }
  const MemoryTracker& memory() const { return memory_; }
  virtual void copy_from_host(void* dst, const void* host_src, uint64_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, uint64_t bytes) = 0;
  virtual void copy(void* dst, const void* src, uint64_t bytes) = 0;  // device to device
  /// Waits for queued work (no-op on CPU).
  virtual void synchronize() {}

  // ---- elementwise and reductions ----
  virtual void fill(float* x, float value, int64_t n) = 0;
  virtual void scale(float* x, float a, int64_t n) = 0;                   // x *= a
  virtual void axpy(float* y, float a, const float* x, int64_t n) = 0;    // y += a * x
  virtual void add(float* out, const float* a, const float* b, int64_t n) = 0;  // out = a + b
  /// Sum of x[i]^2 in double, returned to the host (gradient norms).
  virtual double sum_squares(const float* x, int64_t n) = 0;
  /// Sum of x[i] in double, returned to the host (losses).
  virtual double sum(const float* x, int64_t n) = 0;

  // ---- GEMM: C (M, N) = alpha * op(A) @ op(B) + beta * C, op(A) (M, K), op(B) (K, N) ----
  /// A is stored (M, K), or (K, M) when trans_a; B is stored (K, N), or (N, K) when trans_b.
  virtual void gemm(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                    const float* A, const float* B, float beta, float* C) = 0;
  /// A scope of GEMM calls whose operands do not change inside it (the model brackets the GEMMs
  /// that share an input: q, k and v on the normed hidden state, gate and up, and their backward
  /// groups; nothing but GEMMs runs inside, and no GEMM writes another's operand). A backend that
  /// converts operands before multiplying (CUDA `bf16-copy`) may then convert each distinct operand
  /// once for the scope instead of once per call. Scopes do not nest. Default: nothing to keep.
  virtual void begin_gemm_operand_reuse() {}
  virtual void end_gemm_operand_reuse() {}
  /// The same GEMM with inputs that may be kept in bf16 (GemmOperand). Default: bf16 inputs are
  /// widened into fp32 temporaries (exact) and gemm() runs on them.
  virtual void gemm_typed(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha,
                          GemmOperand A, GemmOperand B, float beta, float* C);
  /// Whether the model keeps the activations only GEMMs read (the normed inputs h1 and h2, the
  /// SwiGLU output) as their bf16 rounding instead of fp32: half the bytes (executor/model/
  /// gemm_stash.h). A backend says yes only when gemm() rounds every fp32 operand to bf16 (round to
  /// nearest even) before it multiplies, so that no value of the run changes: the CPU's bf16
  /// emulation (unless CpuOptions::fp32_stash) and CUDA's `bf16-copy`. Default: no.
  virtual bool keeps_bf16_gemm_stash() const { return false; }

  // ---- the same kernels writing a bf16 output (the bf16 stash: no fp32 copy, no narrowing pass) ----
  /// out (N, C) bf16 = the rounding of rmsnorm_forward's fp32 out; rstd fp32 as there.
  virtual void rmsnorm_forward_bf16(void* out, float* rstd, const float* x, const float* w, int64_t N, int64_t C,
                                    float eps);
  /// out (n) bf16 = the rounding of swiglu_forward's fp32 out.
  virtual void swiglu_forward_bf16(void* out, const float* gate, const float* up, int64_t n);
  /// out (B, T, H, D) bf16 = the rounding of rope_forward applied to a copy of x (x unchanged).
  virtual void rope_forward_bf16(void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                                 float theta);

  // ---- bf16 storage ----
  /// dst (n bf16) = src (n fp32) rounded to nearest even.
  virtual void to_bf16(void* dst, const float* src, int64_t n) = 0;
  /// dst (n fp32) = src (n bf16), exact.
  virtual void from_bf16(float* dst, const void* src, int64_t n) = 0;

  // ---- embedding (vocab-parallel: rows [vocab_begin, vocab_begin + Vl) live here) ----
  /// out (N, C) = table[tok - vocab_begin], or 0 when tok is not in this shard.
  virtual void embedding_forward(float* out, const int32_t* tokens, const float* table,
                                 int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) = 0;
  /// dtable (Vl, C) += scatter of dout (N, C) rows whose token is in this shard.
  virtual void embedding_backward(float* dtable, const float* dout, const int32_t* tokens,
                                  int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) = 0;

  // ---- RMSNorm: out = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) ----
  /// out (N, C), rstd (N) saved for backward, x (N, C), w (C).
  virtual void rmsnorm_forward(float* out, float* rstd, const float* x, const float* w, int64_t N,
                               int64_t C, float eps) = 0;
  /// dx (N, C) += ..., dw (C) += ... (accumulate: dx is the residual stream's gradient).
  virtual void rmsnorm_backward(float* dx, float* dw, const float* dout, const float* x,
                                const float* w, const float* rstd, int64_t N, int64_t C) = 0;

  // ---- rotary embedding, "rotate half" convention (HF Llama), position = t in 0..T-1 ----
  /// In place on x (B, T, H, D): pairs (i, i + D/2) rotated by t * theta^(-2i/D).
  virtual void rope_forward(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta) = 0;
  /// In place on dx (B, T, H, D): the transposed (inverse) rotation.
  virtual void rope_backward(float* dx, int64_t B, int64_t T, int64_t H, int64_t D, float theta) = 0;

  // ---- causal GQA attention, scale 1/sqrt(D) ----
  /// out (B, T, NH, D); lse (B, NH, T) log-sum-exp of each score row; probs (B, NH, T, T) the
  /// softmax, written only when non-null (kept for backward without recompute).
  /// q (B, T, NH, D), k and v (B, T, NKV, D).
  virtual void attention_forward(float* out, float* lse, float* probs, const float* q,
                                 const float* k, const float* v, const AttentionDims& d) = 0;
  /// dq (B, T, NH, D), dk and dv (B, T, NKV, D) overwritten. out (B, T, NH, D) is the forward's
  /// output (fused kernels such as cuDNN's SDPA backward read it). probs may be null: the softmax
  /// is then recomputed from q, k and lse (selective recompute / flash style).
  virtual void attention_backward(float* dq, float* dk, float* dv, const float* dout,
                                  const float* q, const float* k, const float* v, const float* out,
                                  const float* lse, const float* probs, const AttentionDims& d) = 0;
  /// Whether the model keeps q, k, v and the attention output of this shape as bf16 (executor/
  /// model/gemm_stash.h): only when attention_forward/backward round them to bf16 before use
  /// anyway (cuDNN's SDPA; the CPU's bf16 emulation), so that no value changes. Default: no.
  virtual bool keeps_bf16_attention_stash(const AttentionDims& d) {
    (void)d;
    return false;
  }
  /// attention_forward on bf16 q, k, v, writing a bf16 out (same shapes; lse and probs fp32).
  /// Default: widened into fp32 temporaries, attention_forward, out narrowed.
  virtual void attention_forward_bf16(void* out, float* lse, float* probs, const void* q, const void* k,
                                      const void* v, const AttentionDims& d);
  /// attention_backward on bf16 q, k, v and out (dout, dq, dk, dv fp32). Default: widened into
  /// fp32 temporaries, then attention_backward.
  virtual void attention_backward_bf16(float* dq, float* dk, float* dv, const float* dout, const void* q,
                                       const void* k, const void* v, const void* out, const float* lse,
                                       const float* probs, const AttentionDims& d);
  /// Whether attention_backward reads the kept probabilities (B, NH, T, T) when given them. A
  /// backend whose backward always recomputes them (flash style) says false, and the model then
  /// never keeps them: T^2 bytes per head and sequence saved.
  virtual bool attention_backward_reads_probs() const { return true; }

  // ---- SwiGLU: out = silu(gate) * up, elementwise over n ----
  virtual void swiglu_forward(float* out, const float* gate, const float* up, int64_t n) = 0;
  /// dgate, dup overwritten.
  virtual void swiglu_backward(float* dgate, float* dup, const float* dout, const float* gate,
                               const float* up, int64_t n) = 0;

  // ---- vocab-parallel cross-entropy over logits (N, Vl), shard starting at vocab_begin ----
  /// row_max (N) = max over the local shard (then all-reduced MAX across TP by the caller).
  virtual void ce_row_max(float* row_max, const float* logits, int64_t N, int64_t Vl) = 0;
  /// sumexp (N) = sum exp(logit - row_max) over the local shard (then all-reduced SUM).
  virtual void ce_row_sumexp(float* sumexp, const float* logits, const float* row_max, int64_t N,
                             int64_t Vl) = 0;
  /// target_logit (N) = logits[n, target - vocab_begin] when local, else 0 (then all-reduced SUM).
  virtual void ce_target_logit(float* target_logit, const float* logits, const int32_t* targets,
                               int64_t vocab_begin, int64_t N, int64_t Vl) = 0;
  /// loss (N) = log(sumexp) + row_max - target_logit.
  virtual void ce_loss(float* loss, const float* row_max, const float* sumexp,
                       const float* target_logit, int64_t N) = 0;
  /// Folds one vocabulary chunk's row statistics into running ones (the online softmax of
  /// Milakov & Gimelshein 2018, arXiv:1805.02867): with M = max(row_max, chunk_max),
  ///   sumexp = sumexp * exp(row_max - M) + chunk_sumexp * exp(chunk_max - M);  row_max = M.
  /// Start from row_max = -inf, sumexp = 0. The chunked loss (core/loss_chunk.h) also uses it to
  /// rescale a rank's sum to the TP group's max (chunk = the rank's own, running = (max, 0)).
  virtual void ce_merge_stats(float* row_max, float* sumexp, const float* chunk_max,
                              const float* chunk_sumexp, int64_t N) = 0;
  /// dlogits (N, Vl) = scale * (softmax - onehot(target)); may alias logits (in place).
  virtual void ce_backward(float* dlogits, const float* logits, const float* row_max,
                           const float* sumexp, const int32_t* targets, int64_t vocab_begin,
                           float scale, int64_t N, int64_t Vl) = 0;

  // ---- optimizer ----
  /// AdamW on n elements: m, v updated; param updated in place (fp32 master weights).
  virtual void adamw(float* param, const float* grad, float* m, float* v, int64_t n,
                     const AdamWStep& s) = 0;

 protected:
  virtual void* allocate_raw(uint64_t bytes) = 0;
  virtual void free_raw(void* ptr, uint64_t bytes) = 0;

 private:
  MemoryTracker memory_;
};

/// RAII bracket of Backend::begin/end_gemm_operand_reuse around a group of GEMMs.
class GemmOperandReuse {
 public:
  explicit GemmOperandReuse(Backend& backend) : backend_(backend) { backend_.begin_gemm_operand_reuse(); }
  ~GemmOperandReuse() { backend_.end_gemm_operand_reuse(); }
  GemmOperandReuse(const GemmOperandReuse&) = delete;
  GemmOperandReuse& operator=(const GemmOperandReuse&) = delete;

 private:
  Backend& backend_;
};

/// Which CPU implementations to use: the fast ones (Eigen GEMM, Eigen-blocked attention) or their
/// plain twins (triple-loop GEMM, scalar attention), so tests can compare whole runs.
struct CpuOptions {
  bool naive_gemm = false;
  bool reference_attention = false;
  /// Emulate a bf16 mixed-precision run's rounding points (cpu/cpu_bf16_backend.cpp): bf16 GEMM
  /// inputs and layer outputs, fp32 master weights, grads and Adam.
  bool bf16_emulation = false;
  /// Under bf16_emulation, keep h1, h2, act, q, k, v and the attention output in fp32 as the fp32
  /// run does: the plain twin of the bf16 stash (Backend::keeps_bf16_gemm_stash,
  /// keeps_bf16_attention_stash), bit-identical in every value.
  bool fp32_stash = false;
};
std::unique_ptr<Backend> make_cpu_backend(const CpuOptions& options = {});

}  // namespace meshplan::exec
