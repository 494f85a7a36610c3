// bf16 rounding on the CPU: round-to-nearest-even of an fp32 to its 8 significant bits (the value
// a GPU's __float2bfloat16_rn or a bf16 tensor store would keep), kept as an fp32.
#pragma once
#include <cstdint>
#include <cstring>

namespace meshplan::exec {

inline float round_to_bf16(float x) {
  uint32_t u = 0;
  std::memcpy(&u, &x, 4);
  if ((u & 0x7f800000u) == 0x7f800000u) return x;  // inf and NaN unchanged
  u += 0x7fffu + ((u >> 16) & 1u);                 // ties to even; may carry into the exponent
  u &= 0xffff0000u;
  float r = 0;
  std::memcpy(&r, &u, 4);
  return r;
}

/// The 16 bits a bf16 store of x keeps (round to nearest even; inf and NaN kept).
inline uint16_t bf16_bits(float x) {
  const float r = round_to_bf16(x);
  uint32_t u = 0;
  std::memcpy(&u, &r, 4);
  return static_cast<uint16_t>(u >> 16);
}

/// The fp32 value of bf16 bits (exact: bf16 is fp32's upper half).
inline float bf16_value(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float x = 0;
  std::memcpy(&x, &u, 4);
  return x;
}

inline void round_to_bf16(float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = round_to_bf16(x[i]);
}

}  // namespace meshplan::exec
