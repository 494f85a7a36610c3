// Context parallelism's load-balanced sequence split: positions, token slices, rotary embedding at
// global positions (see context_parallel.h).
#include <cassert>

#include "executor/parallel/context_parallel.h"
#include "executor/tensor.h"

namespace meshplan::exec {

int64_t cp_global_position(int64_t t, int64_t T, int cp, int rank) {
  if (cp == 1) return t;
  assert(T % (2 * cp) == 0 && t >= 0 && t < T / cp);
  const int64_t c = T / (2 * cp);
  const int64_t chunk = t < c ? rank : 2 * cp - 1 - rank;
  return chunk * c + t % c;
}

std::vector<int32_t> cp_local_tokens(const int32_t* tokens, int64_t B, int64_t T, int cp, int rank) {
  const int64_t Tl = T / cp;
  std::vector<int32_t> out(static_cast<size_t>(B * Tl));
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < Tl; ++t) out[b * Tl + t] = tokens[b * T + cp_global_position(t, T, cp, rank)];
  }
  return out;
}

void cp_rope(Backend& be, float* x, int64_t B, int64_t T, int64_t H, int64_t D, float theta,
             const GroupContext& cp, bool backward) {
  // The backend rotates position t of a (B, T, H, D) tensor: place each local row at its global
  // position in a zeroed full-length buffer, rotate, take the rows back (rows of zeros stay 0).
  const int64_t Tl = T / cp.size, row = H * D;
  Tensor full(be, DType::F32, {B, T, H, D});
  be.fill(full.f32(), 0.0f, B * T * row);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < Tl; ++t) {
      const int64_t g = cp_global_position(t, T, cp.size, cp.rank);
      be.copy(full.f32() + (b * T + g) * row, x + (b * Tl + t) * row, row * 4);
    }
  }
  if (backward) {
    be.rope_backward(full.f32(), B, T, H, D, theta);
  } else {
    be.rope_forward(full.f32(), B, T, H, D, theta);
  }
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t t = 0; t < Tl; ++t) {
      const int64_t g = cp_global_position(t, T, cp.size, cp.rank);
      be.copy(x + (b * Tl + t) * row, full.f32() + (b * T + g) * row, row * 4);
    }
  }
}

}  // namespace meshplan::exec
