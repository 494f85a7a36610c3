// Embedding backward of the CUDA backend: a stable sort of the tokens, then one thread per (vocab
// row, channel) adding that row's output gradients in token order; bit-identical to the CPU's loop.
//
// Why a sort: the CPU adds dout rows into dtable in token order n = 0..N-1. Keeping that order with
// a thread per channel (the first version) makes N dependent read-modify-writes per thread with only
// C threads: latency-bound, about a microsecond per token (16,384 tokens: ~16 ms a step on an H100,
// whatever the model size). A stable radix sort of (token, position) pairs groups each vocabulary
// row's positions and keeps them ascending, so a thread per (row, channel) adds exactly the same
// values in exactly the same order (fp32 adds, no contraction possible) and all rows run at once.
#include <cub/device/device_radix_sort.cuh>

#include "executor/cuda/cuda_check.h"
#include "executor/cuda/kernel_util.cuh"
#include "executor/cuda/launch.h"

namespace meshplan::exec::cuda {

namespace {

constexpr uint64_t kAlign = 256;  // byte alignment of each scratch array
uint64_t aligned(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

__global__ void iota_kernel(int32_t* v, int64_t n) {
  GRID_STRIDE_LOOP(i, n) v[i] = static_cast<int32_t>(i);
}

// grid (N, ceil(C / kThreads)); block x = index i into the sorted tokens. Only the first index of
// each run of equal tokens works: it walks the run (positions ascending) for its channels.
__global__ void embedding_backward_sorted_kernel(float* dtable, const float* dout,
                                                 const int32_t* sorted_tokens,
                                                 const int32_t* sorted_positions, int64_t vocab_begin,
                                                 int64_t Vl, int64_t N, int64_t C) {
  const int64_t i = blockIdx.x;
  const int32_t tok = sorted_tokens[i];
  if (i > 0 && sorted_tokens[i - 1] == tok) return;
  const int64_t row = static_cast<int64_t>(tok) - vocab_begin;
  if (row < 0 || row >= Vl) return;
  const int64_t c = static_cast<int64_t>(blockIdx.y) * blockDim.x + threadIdx.x;
  if (c >= C) return;
  float acc = dtable[row * C + c];
  for (int64_t j = i; j < N && sorted_tokens[j] == tok; ++j)
    acc += dout[static_cast<int64_t>(sorted_positions[j]) * C + c];
  dtable[row * C + c] = acc;
}

uint64_t sort_temp_bytes(int64_t N) {
  size_t temp = 0;
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp, static_cast<const int32_t*>(nullptr),
                                             static_cast<int32_t*>(nullptr), static_cast<const int32_t*>(nullptr),
                                             static_cast<int32_t*>(nullptr), static_cast<int>(N)));
  return temp;
}

}  // namespace

uint64_t embedding_backward_scratch_bytes(int64_t N) {
  if (N <= 0) return 0;
  const uint64_t ints = aligned(static_cast<uint64_t>(N) * sizeof(int32_t));
  return 3 * ints + aligned(sort_temp_bytes(N));  // positions, sorted tokens, sorted positions, CUB temp
}

void embedding_backward(cudaStream_t s, float* dtable, const float* dout, const int32_t* tokens,
                        int64_t vocab_begin, int64_t Vl, int64_t N, int64_t C, void* scratch) {
  if (N <= 0 || C <= 0) return;
  assert(N <= 0x7fffffff && "cub's item count is an int");
  const uint64_t ints = aligned(static_cast<uint64_t>(N) * sizeof(int32_t));
  char* p = static_cast<char*>(scratch);
  int32_t* positions = reinterpret_cast<int32_t*>(p);
  int32_t* sorted_tokens = reinterpret_cast<int32_t*>(p + ints);
  int32_t* sorted_positions = reinterpret_cast<int32_t*>(p + 2 * ints);
  void* temp = p + 3 * ints;
  size_t temp_bytes = sort_temp_bytes(N);
  iota_kernel<<<grid_for(N), kThreads, 0, s>>>(positions, N);
  CUDA_CHECK_LAUNCH();
  // LSD radix sort: stable, so equal tokens keep their positions ascending (token order).
  CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp, temp_bytes, tokens, sorted_tokens, positions,
                                             sorted_positions, static_cast<int>(N), 0,
                                             static_cast<int>(sizeof(int32_t) * 8), s));
  const dim3 grid(static_cast<unsigned>(N), static_cast<unsigned>((C + kThreads - 1) / kThreads));
  embedding_backward_sorted_kernel<<<grid, kThreads, 0, s>>>(dtable, dout, sorted_tokens, sorted_positions,
                                                             vocab_begin, Vl, N, C);
  CUDA_CHECK_LAUNCH();
}

}  // namespace meshplan::exec::cuda
