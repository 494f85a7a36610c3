// Elementwise kernels and deterministic reductions of the CUDA backend: fill, scale, axpy, add,
// sum / sum of squares (double), bf16 conversion, SwiGLU, AdamW, and the calibration helpers.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "executor/cuda/kernel_util.cuh"
#include "executor/cuda/launch.h"

namespace meshplan::exec::cuda {

namespace {

__global__ void fill_kernel(float* x, float value, int64_t n) {
  GRID_STRIDE_LOOP(i, n) x[i] = value;
}
__global__ void scale_kernel(float* x, float a, int64_t n) {
  GRID_STRIDE_LOOP(i, n) x[i] *= a;
}
__global__ void axpy_kernel(float* y, float a, const float* x, int64_t n) {
  GRID_STRIDE_LOOP(i, n) y[i] += a * x[i];
}
__global__ void add_kernel(float* out, const float* a, const float* b, int64_t n) {
  GRID_STRIDE_LOOP(i, n) out[i] = a[i] + b[i];
}

// First pass: block b sums elements b*kThreads + t, stepping by the grid (fixed order).
__global__ void reduce_partial_kernel(const float* x, int64_t n, bool squares, double* partial) {
  __shared__ double shared[32];
  double acc = 0;
  GRID_STRIDE_LOOP(i, n) {
    const double v = x[i];
    acc += squares ? v * v : v;
  }
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) partial[blockIdx.x] = acc;
}
// Second pass: one block sums the partials.
__global__ void reduce_final_kernel(const double* partial, int count, double* result) {
  __shared__ double shared[32];
  double acc = 0;
  for (int i = threadIdx.x; i < count; i += blockDim.x) acc += partial[i];
  acc = block_sum(acc, shared);
  if (threadIdx.x == 0) *result = acc;
}

__global__ void to_bf16_kernel(__nv_bfloat16* out, const float* x, int64_t n) {
  GRID_STRIDE_LOOP(i, n) out[i] = __float2bfloat16_rn(x[i]);
}

__global__ void from_bf16_kernel(float* out, const __nv_bfloat16* x, int64_t n) {
  GRID_STRIDE_LOOP(i, n) out[i] = __bfloat162float(x[i]);
}

__device__ __forceinline__ float sigmoid(float g) { return 1.0f / (1.0f + expf(-g)); }

__global__ void swiglu_forward_kernel(float* out, const float* gate, const float* up, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    const float g = gate[i];
    out[i] = g * sigmoid(g) * up[i];
  }
}

// The same fp32 value, rounded to bf16 on store (the bf16 stash's act).
__global__ void swiglu_forward_bf16_kernel(__nv_bfloat16* out, const float* gate, const float* up, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    const float g = gate[i];
    out[i] = __float2bfloat16_rn(g * sigmoid(g) * up[i]);
  }
}

__global__ void swiglu_backward_kernel(float* dgate, float* dup, const float* dout,
                                       const float* gate, const float* up, int64_t n) {
  GRID_STRIDE_LOOP(i, n) {
    const float g = gate[i], sig = sigmoid(g), d = dout[i];
    const float dsilu = sig * (1.0f + g * (1.0f - sig));  // d/dg of g * sigmoid(g)
    const float u = up[i];
    dgate[i] = d * u * dsilu;
    dup[i] = d * g * sig;
  }
}

__global__ void adamw_kernel(float* param, const float* grad, float* m, float* v, int64_t n,
                             AdamWStep s) {
  GRID_STRIDE_LOOP(i, n) {
    const float g = grad[i];
    const float mi = s.beta1 * m[i] + (1.0f - s.beta1) * g;
    const float vi = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    const float mhat = mi / s.bias_correction1;
    const float vhat = vi / s.bias_correction2;
    const float p = param[i];
    param[i] = p - s.lr * (mhat / (sqrtf(vhat) + s.eps) + s.weight_decay * p);
  }
}

__global__ void copy_f32_kernel(float* y, const float* x, int64_t n) {
  GRID_STRIDE_LOOP(i, n) y[i] = x[i];
}

__host__ __device__ inline float pattern_value(int64_t i, uint32_t seed) {
  const uint32_t h = static_cast<uint32_t>(i) * 2654435761u + seed * 40503u;
  return static_cast<float>((h >> 16) & 15u) / 16.0f - 0.5f;
}

template <class T>
__device__ T convert_to(float v);
template <>
__device__ float convert_to<float>(float v) { return v; }
template <>
__device__ __nv_bfloat16 convert_to<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }
template <>
__device__ __half convert_to<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ __nv_fp8_e4m3 convert_to<__nv_fp8_e4m3>(float v) { return __nv_fp8_e4m3(v); }

template <class T>
__global__ void fill_pattern_kernel(T* x, int64_t n, uint32_t seed) {
  GRID_STRIDE_LOOP(i, n) x[i] = convert_to<T>(pattern_value(i, seed));
}

}  // namespace

void fill(cudaStream_t s, float* x, float value, int64_t n) {
  if (n <= 0) return;
  fill_kernel<<<grid_for(n), kThreads, 0, s>>>(x, value, n);
  CUDA_CHECK_LAUNCH();
}
void scale(cudaStream_t s, float* x, float a, int64_t n) {
  if (n <= 0) return;
  scale_kernel<<<grid_for(n), kThreads, 0, s>>>(x, a, n);
  CUDA_CHECK_LAUNCH();
}
void axpy(cudaStream_t s, float* y, float a, const float* x, int64_t n) {
  if (n <= 0) return;
  axpy_kernel<<<grid_for(n), kThreads, 0, s>>>(y, a, x, n);
  CUDA_CHECK_LAUNCH();
}
void add(cudaStream_t s, float* out, const float* a, const float* b, int64_t n) {
  if (n <= 0) return;
  add_kernel<<<grid_for(n), kThreads, 0, s>>>(out, a, b, n);
  CUDA_CHECK_LAUNCH();
}

int reduce_blocks(int64_t n) {
  const int b = grid_for(n);
  return b < 1024 ? b : 1024;  // the final pass is one block; 1024 partials keep it short
}

void reduce_sum(cudaStream_t s, const float* x, int64_t n, bool squares, double* partial,
                double* result) {
  const int blocks = reduce_blocks(n);
  reduce_partial_kernel<<<blocks, kThreads, 0, s>>>(x, n, squares, partial);
  CUDA_CHECK_LAUNCH();
  reduce_final_kernel<<<1, kThreads, 0, s>>>(partial, blocks, result);
  CUDA_CHECK_LAUNCH();
}

void to_bf16(cudaStream_t s, void* out, const float* x, int64_t n) {
  if (n <= 0) return;
  to_bf16_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(out), x, n);
  CUDA_CHECK_LAUNCH();
}

void from_bf16(cudaStream_t s, float* out, const void* x, int64_t n) {
  if (n <= 0) return;
  from_bf16_kernel<<<grid_for(n), kThreads, 0, s>>>(out, static_cast<const __nv_bfloat16*>(x), n);
  CUDA_CHECK_LAUNCH();
}

void swiglu_forward(cudaStream_t s, float* out, const float* gate, const float* up, int64_t n) {
  if (n <= 0) return;
  swiglu_forward_kernel<<<grid_for(n), kThreads, 0, s>>>(out, gate, up, n);
  CUDA_CHECK_LAUNCH();
}
void swiglu_forward_bf16(cudaStream_t s, void* out, const float* gate, const float* up, int64_t n) {
  if (n <= 0) return;
  swiglu_forward_bf16_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(out), gate, up, n);
  CUDA_CHECK_LAUNCH();
}

void swiglu_backward(cudaStream_t s, float* dgate, float* dup, const float* dout, const float* gate,
                     const float* up, int64_t n) {
  if (n <= 0) return;
  swiglu_backward_kernel<<<grid_for(n), kThreads, 0, s>>>(dgate, dup, dout, gate, up, n);
  CUDA_CHECK_LAUNCH();
}
void adamw(cudaStream_t s, float* param, const float* grad, float* m, float* v, int64_t n,
           const AdamWStep& step) {
  if (n <= 0) return;
  adamw_kernel<<<grid_for(n), kThreads, 0, s>>>(param, grad, m, v, n, step);
  CUDA_CHECK_LAUNCH();
}

void copy_kernel(cudaStream_t s, float* y, const float* x, int64_t n) {
  if (n <= 0) return;
  // Enough blocks to fill the device (grid_for caps at 65535 x 256 threads, far beyond any GPU).
  copy_f32_kernel<<<grid_for(n), kThreads, 0, s>>>(y, x, n);
  CUDA_CHECK_LAUNCH();
}

float probe_pattern_value(int64_t i, uint32_t seed) { return pattern_value(i, seed); }

void fill_pattern(cudaStream_t s, void* x, int64_t n, ProbeType t, uint32_t seed) {
  if (n <= 0) return;
  switch (t) {
    case ProbeType::F32:
      fill_pattern_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<float*>(x), n, seed);
      break;
    case ProbeType::BF16:
      fill_pattern_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__nv_bfloat16*>(x), n, seed);
      break;
    case ProbeType::F16:
      fill_pattern_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__half*>(x), n, seed);
      break;
    case ProbeType::FP8E4M3:
      fill_pattern_kernel<<<grid_for(n), kThreads, 0, s>>>(static_cast<__nv_fp8_e4m3*>(x), n, seed);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

}  // namespace meshplan::exec::cuda
