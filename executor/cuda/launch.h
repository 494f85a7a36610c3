// Host-side launchers of the CUDA backend's kernels (defined in the .cu files), so the backend's
// .cpp files need no device code. Every launcher queues on `stream` and checks the launch.
// Shapes and semantics are those of the matching Backend virtual (executor/backend.h).
#pragma once
#include <cuda_runtime_api.h>

#include <cstdint>

#include "executor/backend.h"

namespace meshplan::exec::cuda {

// ---- elementwise.cu ----
void fill(cudaStream_t s, float* x, float value, int64_t n);
void scale(cudaStream_t s, float* x, float a, int64_t n);
void axpy(cudaStream_t s, float* y, float a, const float* x, int64_t n);
void add(cudaStream_t s, float* out, const float* a, const float* b, int64_t n);
/// Blocks of the first pass of a deterministic reduction of n elements (fixed for a given n).
int reduce_blocks(int64_t n);
/// partial (reduce_blocks(n)) = per-block sums of x (or x^2) in double; then result (1) = their
/// sum in a fixed order. Deterministic: the same n gives the same summation tree every time.
void reduce_sum(cudaStream_t s, const float* x, int64_t n, bool squares, double* partial,
                double* result);
/// out (n) = bf16(x): round to nearest even.
void to_bf16(cudaStream_t s, void* out, const float* x, int64_t n);
/// out (n) = float(x): exact (x holds n bf16 values).
void from_bf16(cudaStream_t s, float* out, const void* x, int64_t n);
void swiglu_forward(cudaStream_t s, float* out, const float* gate, const float* up, int64_t n);
/// out (n bf16) = bf16(swiglu_forward's value), in one pass.
void swiglu_forward_bf16(cudaStream_t s, void* out, const float* gate, const float* up, int64_t n);
void swiglu_backward(cudaStream_t s, float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int64_t n);
void adamw(cudaStream_t s, float* param, const float* grad, float* m, float* v, int64_t n,
           const AdamWStep& step);

// ---- embedding_backward.cu ----
/// Bytes of device scratch embedding_backward needs for N tokens (sort keys, positions, CUB temp).
uint64_t embedding_backward_scratch_bytes(int64_t N);
/// dtable (Vl, C) += rows of dout (N, C) whose token is in the shard, added in token order (the
/// CPU's order, bit for bit) after a stable sort of the tokens.
void embedding_backward(cudaStream_t s, float* dtable, const float* dout, const int32_t* tokens,
                        int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C, void* scratch);

// ---- norm_embed_rope.cu ----
void embedding_forward(cudaStream_t s, float* out, const int32_t* tokens, const float* table,
                       int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C);
void rmsnorm_forward(cudaStream_t s, float* out, float* rstd, const float* x, const float* w,
                     int64_t N, int64_t C, float eps);
/// out (N, C bf16) = bf16(rmsnorm_forward's value), in one pass; rstd as there.
void rmsnorm_forward_bf16(cudaStream_t s, void* out, float* rstd, const float* x, const float* w, int64_t N,
                          int64_t C, float eps);
/// out (B, T, H, D bf16) = bf16(the forward rotation of x), x unchanged.
void rope_forward_bf16(cudaStream_t s, void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                       float theta);
/// Rows of the per-chunk dw partials rmsnorm_backward needs as scratch: (rows, C) floats.
int64_t rmsnorm_dw_partial_rows(int64_t N);
void rmsnorm_backward(cudaStream_t s, float* dx, float* dw, const float* dout, const float* x,
                      const float* w, const float* rstd, int64_t N, int64_t C, float* dw_partial);
/// sign +1: forward rotation, -1: its inverse (backward).
void rope(cudaStream_t s, float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta,
          float sign);

// ---- cross_entropy.cu ----
void ce_row_max(cudaStream_t s, float* row_max, const float* logits, int64_t N, int64_t Vl);
void ce_row_sumexp(cudaStream_t s, float* sumexp, const float* logits, const float* row_max,
                   int64_t N, int64_t Vl);
void ce_target_logit(cudaStream_t s, float* target_logit, const float* logits,
                     const int32_t* targets, int64_t vocab_begin, int64_t N, int64_t Vl);
void ce_merge_stats(cudaStream_t s, float* row_max, float* sumexp, const float* chunk_max,
                    const float* chunk_sumexp, int64_t N);
void ce_loss(cudaStream_t s, float* loss, const float* row_max, const float* sumexp,
             const float* target_logit, int64_t N);
void ce_backward(cudaStream_t s, float* dlogits, const float* logits, const float* row_max,
                 const float* sumexp, const int32_t* targets, int64_t vocab_begin, float scale,
                 int64_t N, int64_t Vl);

// ---- attention_fwd.cu / attention_bwd.cu (flash style: no (T, T) matrix unless probs) ----
/// Largest head dimension the attention kernels take.
constexpr int64_t kMaxHeadDim = 256;
void attention_forward(cudaStream_t s, float* out, float* lse, float* probs, const float* q,
                       const float* k, const float* v, const AttentionDims& d);
/// Floats of scratch attention_backward needs: the per-row dot(dO, O) (B, NH, T).
int64_t attention_backward_scratch_floats(const AttentionDims& d);
void attention_backward(cudaStream_t s, float* dq, float* dk, float* dv, const float* dout,
                        const float* q, const float* k, const float* v, const float* lse,
                        const AttentionDims& d, float* scratch);

// ---- calibration helpers (elementwise.cu) ----
/// y = x (n floats) by a grid-stride kernel: reads 4 n bytes, writes 4 n (HBM bandwidth probe).
void copy_kernel(cudaStream_t s, float* y, const float* x, int64_t n);
/// Element types of the calibration GEMMs.
enum class ProbeType { F32, BF16, F16, FP8E4M3 };
/// Value i of the probe pattern: a multiple of 1/16 in [-0.5, 0.5), exact in every ProbeType, so a
/// GEMM over them accumulated in fp32 is exact while K <= 8192 (|sum| < 2^24 / 256).
float probe_pattern_value(int64_t i, uint32_t seed);
/// x (n elements of type t) = probe_pattern_value(i, seed).
void fill_pattern(cudaStream_t s, void* x, int64_t n, ProbeType t, uint32_t seed);

}  // namespace meshplan::exec::cuda
