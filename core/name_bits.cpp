// Bit sets named by a table (core/name_bits.h).
#include "core/name_bits.h"

#include <sstream>

namespace meshplan {

std::vector<std::string> bit_names(NamedBits table, uint32_t bits) {
  std::vector<std::string> out;
  for (const NamedBit& n : table)
    if (bits & n.bit) out.emplace_back(n.text);
  return out;
}

std::string bit_names_text(NamedBits table, uint32_t bits, const std::string& separator) {
  std::string out;
  for (const std::string& name : bit_names(table, bits)) out += (out.empty() ? "" : separator) + name;
  return out;
}

std::optional<uint32_t> parse_bit_names(NamedBits table, const std::string& s, std::string* bad) {
  std::string text = s;
  for (char& c : text)
    if (c == ',') c = ' ';
  std::istringstream in(text);
  uint32_t bits = 0;
  std::string word;
  while (in >> word) {
    uint32_t bit = 0;
    for (const NamedBit& n : table)
      if (word == n.text) bit = n.bit;
    if (bit == 0 || (bits & bit)) {
      if (bad) *bad = word;
      return std::nullopt;
    }
    bits |= bit;
  }
  if (bits == 0) {
    if (bad) *bad = s;
    return std::nullopt;
  }
  return bits;
}

}  // namespace meshplan
