// Vocab-parallel cross-entropy pieces of the CUDA backend over logits (N, Vl): row max, row
// sum-exp (double accumulation, as the CPU), the online merge of a vocabulary chunk's statistics,
// target logit, loss, and the softmax-minus-onehot backward (in place allowed). The TP all-reduces between the pieces are the caller's.
#include "executor/cuda/kernel_util.cuh"
#include "executor/cuda/launch.h"

namespace meshplan::exec::cuda {

namespace {

constexpr int kRowThreads = 256;  // block per row for the row reductions

__global__ void row_max_kernel(float* row_max, const float* logits, int64_t Vl) {
  __shared__ float shared[32];
  const float* l = logits + static_cast<int64_t>(blockIdx.x) * Vl;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j < Vl; j += blockDim.x) m = fmaxf(m, l[j]);
  m = block_max(m, shared);
  if (threadIdx.x == 0) row_max[blockIdx.x] = m;
}

__global__ void row_sumexp_kernel(float* sumexp, const float* logits, const float* row_max, int64_t Vl) {
  __shared__ double shared[32];
  const float* l = logits + static_cast<int64_t>(blockIdx.x) * Vl;
  const float m = row_max[blockIdx.x];
  double s = 0;
  for (int64_t j = threadIdx.x; j < Vl; j += blockDim.x) s += exp(static_cast<double>(l[j] - m));
  s = block_sum(s, shared);
  if (threadIdx.x == 0) sumexp[blockIdx.x] = static_cast<float>(s);
}

__global__ void target_logit_kernel(float* target_logit, const float* logits, const int32_t* targets,
                                    int64_t vocab_begin, int64_t N, int64_t Vl) {
  GRID_STRIDE_LOOP(n, N) {
    const int64_t j = static_cast<int64_t>(targets[n]) - vocab_begin;
    target_logit[n] = (j >= 0 && j < Vl) ? logits[n * Vl + j] : 0.0f;
  }
}

// Online-softmax merge of a vocabulary chunk's (max, sum-exp) into the running ones, per row.
__global__ void merge_stats_kernel(float* row_max, float* sumexp, const float* chunk_max,
                                   const float* chunk_sumexp, int64_t N) {
  GRID_STRIDE_LOOP(n, N) {
    const float m = fmaxf(row_max[n], chunk_max[n]);
    if (m == -INFINITY) continue;  // nothing seen yet on either side
    sumexp[n] = sumexp[n] * expf(row_max[n] - m) + chunk_sumexp[n] * expf(chunk_max[n] - m);
    row_max[n] = m;
  }
}

__global__ void loss_kernel(float* loss, const float* row_max, const float* sumexp,
                            const float* target_logit, int64_t N) {
  GRID_STRIDE_LOOP(n, N) loss[n] = logf(sumexp[n]) + row_max[n] - target_logit[n];
}

// Element (n, j): scale * (exp(l - max) / sumexp - [j == target]); reads then writes the same
// element, so dlogits may alias logits.
__global__ void ce_backward_kernel(float* dlogits, const float* logits, const float* row_max,
                                   const float* sumexp, const int32_t* targets, int64_t vocab_begin,
                                   float scale, int64_t N, int64_t Vl) {
  GRID_STRIDE_LOOP(i, N * Vl) {
    const int64_t n = i / Vl, j = i - n * Vl;
    const float p = expf(logits[i] - row_max[n]) * (1.0f / sumexp[n]);
    const int64_t t = static_cast<int64_t>(targets[n]) - vocab_begin;
    dlogits[i] = scale * (p - (j == t ? 1.0f : 0.0f));
  }
}

}  // namespace

void ce_row_max(cudaStream_t s, float* row_max, const float* logits, int64_t N, int64_t Vl) {
  if (N <= 0) return;
  row_max_kernel<<<static_cast<unsigned>(N), kRowThreads, 0, s>>>(row_max, logits, Vl);
  CUDA_CHECK_LAUNCH();
}

void ce_row_sumexp(cudaStream_t s, float* sumexp, const float* logits, const float* row_max,
                   int64_t N, int64_t Vl) {
  if (N <= 0) return;
  row_sumexp_kernel<<<static_cast<unsigned>(N), kRowThreads, 0, s>>>(sumexp, logits, row_max, Vl);
  CUDA_CHECK_LAUNCH();
}

void ce_target_logit(cudaStream_t s, float* target_logit, const float* logits,
                     const int32_t* targets, int64_t vocab_begin, int64_t N, int64_t Vl) {
  if (N <= 0) return;
  target_logit_kernel<<<grid_for(N), kThreads, 0, s>>>(target_logit, logits, targets, vocab_begin, N, Vl);
  CUDA_CHECK_LAUNCH();
}

void ce_merge_stats(cudaStream_t s, float* row_max, float* sumexp, const float* chunk_max,
                    const float* chunk_sumexp, int64_t N) {
  if (N <= 0) return;
  merge_stats_kernel<<<grid_for(N), kThreads, 0, s>>>(row_max, sumexp, chunk_max, chunk_sumexp, N);
  CUDA_CHECK_LAUNCH();
}

void ce_loss(cudaStream_t s, float* loss, const float* row_max, const float* sumexp,
             const float* target_logit, int64_t N) {
  if (N <= 0) return;
  loss_kernel<<<grid_for(N), kThreads, 0, s>>>(loss, row_max, sumexp, target_logit, N);
  CUDA_CHECK_LAUNCH();
}

void ce_backward(cudaStream_t s, float* dlogits, const float* logits, const float* row_max,
                 const float* sumexp, const int32_t* targets, int64_t vocab_begin, float scale,
                 int64_t N, int64_t Vl) {
  if (N * Vl <= 0) return;
  ce_backward_kernel<<<grid_for(N * Vl), kThreads, 0, s>>>(dlogits, logits, row_max, sumexp, targets,
                                                          vocab_begin, scale, N, Vl);
  CUDA_CHECK_LAUNCH();
}

}  // namespace meshplan::exec::cuda
