// Layout-independent initialisation (see init.h): splitmix64 counters, Box-Muller normals.
#include "executor/model/init.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace meshplan::exec {

namespace {
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// Uniform in (0, 1]: 53 random bits, never 0 (log below).
double uniform(uint64_t bits) { return (static_cast<double>(bits >> 11) + 1.0) * 0x1.0p-53; }
}  // namespace

uint64_t stream_key(uint64_t seed, int64_t layer, const std::string& name) {
  uint64_t h = splitmix64(seed ^ 0x6D657368706C616Eull);  // "meshplan"
  h = splitmix64(h ^ static_cast<uint64_t>(layer + 1));
  for (char c : name) h = splitmix64(h ^ static_cast<unsigned char>(c));
  return h;
}

float normal_at(uint64_t key, uint64_t index) {
  const uint64_t pair = index / 2;
  const double u1 = uniform(splitmix64(key ^ splitmix64(2 * pair)));
  const double u2 = uniform(splitmix64(key ^ splitmix64(2 * pair + 1)));
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double angle = 2.0 * M_PI * u2;
  return static_cast<float>(index % 2 == 0 ? r * std::cos(angle) : r * std::sin(angle));
}

std::vector<float> full_initial_values(const ParamView& v, uint64_t seed, int64_t num_layers) {
  int64_t n = 1;
  for (int64_t d : v.full_shape) n *= d;
  std::vector<float> out(static_cast<size_t>(n));
  if (v.base == "attn_norm" || v.base == "mlp_norm" || v.base == "final_norm") {
    for (float& x : out) x = 1.0f;
    return out;
  }
  const bool residual_out = v.base == "wo" || v.base == "w_down" || v.base == "expert_down";
  const double std = residual_out ? 0.02 / std::sqrt(2.0 * static_cast<double>(num_layers)) : 0.02;
  const uint64_t key = stream_key(seed, v.layer, v.base);
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<float>(std * normal_at(key, i));
  return out;
}

std::vector<float> shard_of(const std::vector<float>& full, const ParamView& v, int tp_rank) {
  if (v.split_dim < 0) return full;
  assert(v.full_shape.size() <= 2);
  const int64_t rows = v.full_shape[0];
  const int64_t cols = v.full_shape.size() == 2 ? v.full_shape[1] : 1;
  std::vector<float> out(static_cast<size_t>(v.numel()));
  if (v.split_dim == 0) {
    const int64_t local_rows = v.shape[0];
    const float* src = full.data() + tp_rank * local_rows * cols;
    std::copy(src, src + local_rows * cols, out.begin());
  } else {
    const int64_t local_cols = v.shape[1];
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = full.data() + r * cols + tp_rank * local_cols;
      std::copy(src, src + local_cols, out.begin() + r * local_cols);
    }
  }
  return out;
}

}  // namespace meshplan::exec
