// Shared by the flash-style attention kernels: tile sizes, (B, T, H, D) indexing, dispatch on the
// head dimension and the dynamic shared-memory opt-in.
#pragma once
#include <cuda_runtime.h>

#include <cassert>
#include <cstdint>
#include <string>

#include "executor/backend.h"
#include "executor/cuda/kernel_util.cuh"

namespace meshplan::exec::cuda {

// A block covers 32 rows (queries in the forward and dQ kernels, keys in the dK/dV kernel): 8
// warps of 4 rows. The other side is streamed in tiles of 32 (one per lane).
constexpr int kAttnWarps = 8;
constexpr int kAttnRowsPerWarp = 4;
constexpr int kAttnRows = kAttnWarps * kAttnRowsPerWarp;  // 32
constexpr int kAttnTile = 32;                              // = warp size: lane <-> streamed row

/// Offset of (b, t, h, 0) in a (B, T, H, D) tensor.
__host__ __device__ inline int64_t bthd(int64_t b, int64_t t, int64_t h, int64_t T, int64_t H, int64_t D) {
  return ((b * T + t) * H + h) * D;
}

/// Dims per lane of a head dimension D (D <= 32 * DPL): 1, 2, 4 or 8; the kernels are
/// instantiated for these four.
inline int dims_per_lane(int64_t D) {
  assert(D >= 1 && D <= 256);
  return D <= 32 ? 1 : D <= 64 ? 2 : D <= 128 ? 4 : 8;
}

/// The grid's y dimension is one (sequence, head) pair each: at most 65535.
inline void check_grid_heads(const AttentionDims& d) {
  if (d.B * d.NH > 65535) {
    device_fail("meshplan", "attention over B * NH = " + std::to_string(d.B * d.NH) +
                                " (sequence, head) pairs exceeds the kernels' grid (65535); use a smaller micro-batch",
                "attention launch", __FILE__, __LINE__);
  }
}

/// Allows `kernel` more than the default 48 KB of dynamic shared memory when it needs it.
template <class K>
void allow_shared_bytes(K kernel, size_t bytes) {
  if (bytes > 48 * 1024) {
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(bytes)));
  }
}

}  // namespace meshplan::exec::cuda
