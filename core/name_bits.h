// Bit sets named by a table of (bit, name) pairs: printing them in table order and parsing name lists.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace meshplan {

struct NamedBit {
  uint32_t bit;
  const char* text;
};

/// Span of a constexpr table (C++17 has no std::span).
struct NamedBits {
  const NamedBit* begin_;
  const NamedBit* end_;
  const NamedBit* begin() const { return begin_; }
  const NamedBit* end() const { return end_; }
};
template <size_t N>
constexpr NamedBits named_bits(const NamedBit (&table)[N]) {
  return {table, table + N};
}

/// The names of the set bits, in the table's order.
std::vector<std::string> bit_names(NamedBits table, uint32_t bits);
/// Those names joined by `separator`; "" for 0.
std::string bit_names_text(NamedBits table, uint32_t bits, const std::string& separator);
/// Names separated by commas or spaces; nullopt on an unknown or repeated name or an empty list, with
/// `bad` (when given) the offending name, or the whole text when it names nothing.
std::optional<uint32_t> parse_bit_names(NamedBits table, const std::string& text, std::string* bad);

}  // namespace meshplan
