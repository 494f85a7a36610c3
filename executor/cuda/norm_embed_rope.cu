// Embedding forward (vocab-parallel), RMSNorm forward/backward and rotary kernels of the CUDA
// backend (the embedding backward is embedding_backward.cu). Accumulation orders follow the CPU
// backend where it is cheap; every kernel is deterministic (no atomics).
#include <cuda_bf16.h>

#include "executor/cuda/kernel_util.cuh"
#include "executor/cuda/launch.h"

namespace meshplan::exec::cuda {

namespace {

constexpr int kRowsPerBlock = 8;       // RMSNorm: one warp per row, 8 warps per block
constexpr int64_t kDwChunkRows = 128;  // RMSNorm dw: rows summed per partial

// out (N, C): thread per element; rows whose token is outside [vocab_begin, vocab_begin + Vl) are 0.
__global__ void embedding_forward_kernel(float* out, const int32_t* tokens, const float* table,
                                         int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) {
  GRID_STRIDE_LOOP(i, N * C) {
    const int64_t n = i / C, c = i - n * C;
    const int64_t row = static_cast<int64_t>(tokens[n]) - vocab_begin;
    out[i] = (row >= 0 && row < Vl) ? table[row * C + c] : 0.0f;
  }
}

__device__ __forceinline__ void store(float* p, float v) { *p = v; }
__device__ __forceinline__ void store(__nv_bfloat16* p, float v) { *p = __float2bfloat16_rn(v); }

// Warp per row: rstd = 1 / sqrt(mean(x^2) + eps) with the sum of squares in double (as the CPU).
// Out is fp32, or bf16 rounded from the same fp32 value (the bf16 stash).
template <class Out>
__global__ void rmsnorm_forward_kernel(Out* out, float* rstd, const float* x, const float* w,
                                       int64_t N, int64_t C, float eps) {
  const int lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (n >= N) return;
  const float* xn = x + n * C;
  double ss = 0;
  for (int64_t c = lane; c < C; c += 32) ss += static_cast<double>(xn[c]) * xn[c];
  ss = warp_sum(ss);
  const float r = static_cast<float>(1.0 / sqrt(ss / static_cast<double>(C) + eps));
  if (lane == 0) rstd[n] = r;
  Out* on = out + n * C;
  for (int64_t c = lane; c < C; c += 32) store(on + c, xn[c] * r * w[c]);
}

// Warp per row: dx += r w dy - (r^3 / C) (sum_j dy_j w_j x_j) x.
__global__ void rmsnorm_backward_dx_kernel(float* dx, const float* dout, const float* x,
                                           const float* w, const float* rstd, int64_t N, int64_t C) {
  const int lane = threadIdx.x & 31;
  const int64_t n = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + (threadIdx.x >> 5);
  if (n >= N) return;
  const float* xn = x + n * C;
  const float* dn = dout + n * C;
  const float r = rstd[n];
  double dot = 0;
  for (int64_t c = lane; c < C; c += 32) dot += static_cast<double>(dn[c]) * w[c] * xn[c];
  dot = warp_sum(dot);
  const float k = static_cast<float>(dot * r * r * r / static_cast<double>(C));
  float* dxn = dx + n * C;
  for (int64_t c = lane; c < C; c += 32) dxn[c] += r * w[c] * dn[c] - k * xn[c];
}

// partial (chunks, C): chunk j sums dy x r over rows [j * kDwChunkRows, ...) in row order.
__global__ void rmsnorm_dw_partial_kernel(float* partial, const float* dout, const float* x,
                                          const float* rstd, int64_t N, int64_t C) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t chunk = blockIdx.y;
  if (c >= C) return;
  const int64_t begin = chunk * kDwChunkRows;
  const int64_t end = begin + kDwChunkRows < N ? begin + kDwChunkRows : N;
  float acc = 0;
  for (int64_t n = begin; n < end; ++n) acc += dout[n * C + c] * x[n * C + c] * rstd[n];
  partial[chunk * C + c] = acc;
}

// dw (C) += sum over chunks in order.
__global__ void rmsnorm_dw_final_kernel(float* dw, const float* partial, int64_t chunks, int64_t C) {
  GRID_STRIDE_LOOP(c, C) {
    float acc = 0;
    for (int64_t j = 0; j < chunks; ++j) acc += partial[j * C + c];
    dw[c] += acc;
  }
}

// The rotated pair, products and sum each rounded (no fused multiply-add): the in-place and the
// bf16-output kernels then agree bit for bit, and both with the CPU's (x1 c - x2 s, x2 c + x1 s).
__device__ __forceinline__ float rotated_first(float x1, float x2, float c, float s) {
  return __fsub_rn(__fmul_rn(x1, c), __fmul_rn(x2, s));
}
__device__ __forceinline__ float rotated_second(float x1, float x2, float c, float s) {
  return __fadd_rn(__fmul_rn(x2, c), __fmul_rn(x1, s));
}

// Thread per pair (i, i + D/2) of x (B, T, H, D); angle sign * t * theta^(-2i/D) in double.
__global__ void rope_kernel(float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta,
                            float sign) {
  const int64_t half = D / 2;
  GRID_STRIDE_LOOP(idx, B * T * H * half) {
    const int64_t i = idx % half;
    const int64_t bth = idx / half;  // (b * T + t) * H + h
    const int64_t t = (bth / H) % T;
    const double inv_freq = pow(static_cast<double>(theta), -2.0 * static_cast<double>(i) / static_cast<double>(D));
    const double angle = static_cast<double>(sign) * static_cast<double>(t) * inv_freq;
    double sd, cd;
    sincos(angle, &sd, &cd);
    const float c = static_cast<float>(cd), s = static_cast<float>(sd);
    float* p = x + bth * D;
    const float x1 = p[i], x2 = p[i + half];
    p[i] = rotated_first(x1, x2, c, s);
    p[i + half] = rotated_second(x1, x2, c, s);
  }
}

// rope_kernel's forward rotation of x written, rounded to bf16, to out (x unchanged): the same
// fp32 arithmetic, so out is to_bf16 of the in-place kernel's result bit for bit.
__global__ void rope_to_bf16_kernel(__nv_bfloat16* out, const float* x, int64_t B, int64_t T, int64_t H,
                                    int64_t D, float theta) {
  const int64_t half = D / 2;
  GRID_STRIDE_LOOP(idx, B * T * H * half) {
    const int64_t i = idx % half;
    const int64_t bth = idx / half;
    const int64_t t = (bth / H) % T;
    const double inv_freq = pow(static_cast<double>(theta), -2.0 * static_cast<double>(i) / static_cast<double>(D));
    const double angle = static_cast<double>(t) * inv_freq;
    double sd, cd;
    sincos(angle, &sd, &cd);
    const float c = static_cast<float>(cd), s = static_cast<float>(sd);
    const float* p = x + bth * D;
    const float x1 = p[i], x2 = p[i + half];
    out[bth * D + i] = __float2bfloat16_rn(rotated_first(x1, x2, c, s));
    out[bth * D + i + half] = __float2bfloat16_rn(rotated_second(x1, x2, c, s));
  }
}

int row_blocks(int64_t N) { return static_cast<int>((N + kRowsPerBlock - 1) / kRowsPerBlock); }

}  // namespace

void embedding_forward(cudaStream_t s, float* out, const int32_t* tokens, const float* table,
                       int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C) {
  if (N * C <= 0) return;
  embedding_forward_kernel<<<grid_for(N * C), kThreads, 0, s>>>(out, tokens, table, vocab_begin, Vl, N, C);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_forward(cudaStream_t s, float* out, float* rstd, const float* x, const float* w,
                     int64_t N, int64_t C, float eps) {
  if (N <= 0) return;
  rmsnorm_forward_kernel<float><<<row_blocks(N), 32 * kRowsPerBlock, 0, s>>>(out, rstd, x, w, N, C, eps);
  CUDA_CHECK_LAUNCH();
}

void rmsnorm_forward_bf16(cudaStream_t s, void* out, float* rstd, const float* x, const float* w, int64_t N,
                          int64_t C, float eps) {
  if (N <= 0) return;
  rmsnorm_forward_kernel<__nv_bfloat16><<<row_blocks(N), 32 * kRowsPerBlock, 0, s>>>(
      static_cast<__nv_bfloat16*>(out), rstd, x, w, N, C, eps);
  CUDA_CHECK_LAUNCH();
}

void rope_forward_bf16(cudaStream_t s, void* out, const float* x, int64_t B, int64_t T, int64_t H, int64_t D,
                       float theta) {
  const int64_t n = B * T * H * (D / 2);
  if (n <= 0) return;
  rope_to_bf16_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(out), x, B, T, H, D, theta);
  CUDA_CHECK_LAUNCH();
}

int64_t rmsnorm_dw_partial_rows(int64_t N) { return (N + kDwChunkRows - 1) / kDwChunkRows; }

void rmsnorm_backward(cudaStream_t s, float* dx, float* dw, const float* dout, const float* x,
                      const float* w, const float* rstd, int64_t N, int64_t C, float* dw_partial) {
  if (N <= 0 || C <= 0) return;
  rmsnorm_backward_dx_kernel<<<row_blocks(N), 32 * kRowsPerBlock, 0, s>>>(dx, dout, x, w, rstd, N, C);
  CUDA_CHECK_LAUNCH();
  const int64_t chunks = rmsnorm_dw_partial_rows(N);
  const dim3 grid(static_cast<unsigned>((C + kThreads - 1) / kThreads), static_cast<unsigned>(chunks));
  rmsnorm_dw_partial_kernel<<<grid, kThreads, 0, s>>>(dw_partial, dout, x, rstd, N, C);
  CUDA_CHECK_LAUNCH();
  rmsnorm_dw_final_kernel<<<grid_for(C), kThreads, 0, s>>>(dw, dw_partial, chunks, C);
  CUDA_CHECK_LAUNCH();
}

void rope(cudaStream_t s, float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta,
          float sign) {
  const int64_t n = B * T * H * (D / 2);
  if (n <= 0) return;
  rope_kernel<<<grid_for(n), kThreads, 0, s>>>(x, B, T, H, D, theta, sign);
  CUDA_CHECK_LAUNCH();
}

}  // namespace meshplan::exec::cuda
