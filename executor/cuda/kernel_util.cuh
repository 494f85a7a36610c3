// Device helpers shared by the CUDA backend's kernels: launch sizes, warp/block reductions.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "executor/cuda/cuda_check.h"

namespace meshplan::exec::cuda {

constexpr int kThreads = 256;          // threads per block of the elementwise kernels
constexpr int kMaxGridBlocks = 65535;  // grid-stride loops cover the rest

/// Blocks for a grid-stride loop over n elements.
inline int grid_for(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxGridBlocks ? kMaxGridBlocks : b));
}

#define GRID_STRIDE_LOOP(i, n)                                                              \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

template <class T>
__device__ __forceinline__ T warp_sum(T v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

/// Sum over the block (blockDim.x a multiple of 32, <= 1024); every thread gets the result.
/// `shared` holds 32 elements. Deterministic: fixed tree for a given blockDim.
template <class T>
__device__ T block_sum(T v, T* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_sum(v);
  __syncthreads();  // `shared` may still be read by a previous call
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  T r = lane < warps ? shared[lane] : T(0);
  return warp_sum(r);
}

__device__ __forceinline__ float block_max(float v, float* shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  v = warp_max(v);
  __syncthreads();
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  float r = lane < warps ? shared[lane] : -INFINITY;
  return warp_max(r);
}

}  // namespace meshplan::exec::cuda
