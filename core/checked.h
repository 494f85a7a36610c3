// Checked integer arithmetic for sizes and products (GPU counts, batches, parameters, bytes, events).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace meshplan {

/// a*b, or nullopt when it does not fit in int64 (either sign).
inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// a+b, or nullopt on int64 overflow.
inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

/// The product of every factor, or nullopt as soon as a partial product overflows.
inline std::optional<int64_t> checked_product(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors) {
    auto p = checked_mul(r, f);
    if (!p) return std::nullopt;
    r = *p;
  }
  return r;
}

/// The product when it is <= limit (all factors >= 0), else nullopt: "fits within the bound".
inline std::optional<int64_t> product_within(std::initializer_list<int64_t> factors, int64_t limit) {
  auto p = checked_product(factors);
  if (!p || *p > limit) return std::nullopt;
  return p;
}

/// Narrows to int when the value fits, else nullopt.
inline std::optional<int> checked_int(int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) return std::nullopt;
  return static_cast<int>(v);
}

}  // namespace meshplan
