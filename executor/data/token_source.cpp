// Token sources: synthetic Markov chain, binary token files (raw or llm.c header), text as bytes.
#include "executor/data/token_source.h"

#include <sys/stat.h>

#include <cassert>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "core/utf8.h"

namespace meshplan::exec {

namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Chains restart every kSegment tokens so any position is computed in < kSegment steps.
class SyntheticTokens final : public TokenSource {
 public:
  SyntheticTokens(int64_t vocab, uint64_t seed) : vocab_(vocab), seed_(mix(seed)) {}
  int64_t vocab_size() const override { return vocab_; }
  int64_t num_tokens() const override { return int64_t{1} << 40; }
  std::string describe() const override {
    return "synthetic Markov tokens (vocab " + std::to_string(vocab_) + ")";
  }
  void read(int64_t start, int64_t n, int32_t* out) const override {
    assert(start >= 0 && start + n <= num_tokens());
    const int64_t seg_start = start / kSegment * kSegment;
    int64_t tok = first_of(seg_start);
    for (int64_t i = seg_start; i < start; ++i) tok = next(tok, i + 1);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t pos = start + i;
      if (i > 0) tok = pos % kSegment == 0 ? first_of(pos) : next(tok, pos);
      out[i] = static_cast<int32_t>(tok);
    }
  }

 private:
  static constexpr int64_t kSegment = 64;
  static constexpr uint64_t kSuccessors = 4;
  int64_t first_of(int64_t pos) const {
    return static_cast<int64_t>(mix(seed_ ^ mix(static_cast<uint64_t>(pos))) % vocab_);
  }
  // Token at `pos` given the one before: one of kSuccessors choices fixed per previous token.
  int64_t next(int64_t prev, int64_t pos) const {
    const uint64_t choice = mix(seed_ + 0x5851F42D4C957F2Dull * static_cast<uint64_t>(pos)) % kSuccessors;
    return static_cast<int64_t>(mix(seed_ ^ mix(static_cast<uint64_t>(prev) * kSuccessors + choice)) % vocab_);
  }
  int64_t vocab_;
  uint64_t seed_;
};

// Tokens kept in memory at their file width (1, 2 or 4 bytes).
class MemoryTokens final : public TokenSource {
 public:
  MemoryTokens(std::vector<unsigned char> bytes, int width, int64_t vocab, std::string what)
      : bytes_(std::move(bytes)), width_(width), vocab_(vocab), what_(std::move(what)) {}
  int64_t vocab_size() const override { return vocab_; }
  int64_t num_tokens() const override { return static_cast<int64_t>(bytes_.size()) / width_; }
  std::string describe() const override { return what_; }
  void read(int64_t start, int64_t n, int32_t* out) const override {
    assert(start >= 0 && start + n <= num_tokens());
    for (int64_t i = 0; i < n; ++i) out[i] = static_cast<int32_t>(at(start + i));
  }
  uint32_t at(int64_t i) const {
    const unsigned char* p = bytes_.data() + i * width_;
    if (width_ == 1) return p[0];
    if (width_ == 2) return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8;
    return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
           static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
  }

 private:
  std::vector<unsigned char> bytes_;
  int width_;
  int64_t vocab_;
  std::string what_;
};

Result<std::vector<unsigned char>> read_all(const std::string& path) {
  // Only regular files: a FIFO or /dev/zero would block or never end.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return make_error(path, "data", path, "cannot open the data file", "check the --data path");
  if (!S_ISREG(st.st_mode))
    return make_error(path, "data", path, "is not a regular file (a FIFO, device or directory)",
                      "pass a text or token file");
  std::ifstream f(path, std::ios::binary);
  if (!f) return make_error(path, "data", path, "cannot open the data file", "check the --data path");
  std::vector<unsigned char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return make_error(path, "data", "", "the data file is empty");
  return bytes;
}

constexpr int32_t kLlmcMagic = 20240520;
constexpr size_t kLlmcHeaderBytes = 256 * 4;

}  // namespace

std::unique_ptr<TokenSource> make_synthetic_tokens(int64_t vocab, uint64_t seed) {
  assert(vocab > 0);
  return std::make_unique<SyntheticTokens>(vocab, seed);
}

Result<std::unique_ptr<TokenSource>> open_token_file(const std::string& path, TokenFileType type,
                                                     int64_t vocab) {
  auto bytes = read_all(path);
  if (!bytes) return bytes.error();
  std::vector<unsigned char> data = std::move(bytes).value();
  int width = type == TokenFileType::Uint16 ? 2 : 4;
  int32_t header[3] = {0, 0, 0};
  if (data.size() >= kLlmcHeaderBytes) std::memcpy(header, data.data(), sizeof(header));
  std::string what = "token file " + path;
  if (header[0] == kLlmcMagic) {  // llm.c: 256 int32 header, then uint16 tokens
    width = 2;
    data.erase(data.begin(), data.begin() + kLlmcHeaderBytes);
    what += " (llm.c header)";
  }
  if (data.size() % width != 0) {
    return make_error(path, "data", std::to_string(data.size()) + " bytes",
                      "not a whole number of " + std::to_string(width) + "-byte tokens",
                      "use .u16/.bin for uint16 tokens or .u32 for uint32");
  }
  auto src = std::make_unique<MemoryTokens>(std::move(data), width, vocab,
                                            what + ", uint" + std::to_string(8 * width));
  for (int64_t i = 0; i < src->num_tokens(); ++i) {
    if (src->at(i) >= static_cast<uint64_t>(vocab)) {
      return make_error(path, "data", "token " + std::to_string(src->at(i)) + " at " + std::to_string(i),
                        "token id not below the model's vocab_size=" + std::to_string(vocab),
                        "tokenize with the model's vocabulary");
    }
  }
  return std::unique_ptr<TokenSource>(std::move(src));
}

Result<std::unique_ptr<TokenSource>> open_text_file(const std::string& path) {
  auto bytes = read_all(path);
  if (!bytes) return bytes.error();
  // A text file is UTF-8 without NUL bytes; anything else is a binary file given as text.
  const std::vector<unsigned char>& b = bytes.value();
  const std::string as_text(b.begin(), b.end());
  size_t bad = invalid_utf8_offset(as_text);
  const size_t nul = as_text.find('\0');
  if (nul != std::string::npos && (bad == std::string::npos || nul < bad)) bad = nul;
  if (bad != std::string::npos) {
    char byte[8];
    std::snprintf(byte, sizeof byte, "0x%02X", b[bad]);
    return make_error(path, "data", std::string(byte) + " at byte " + std::to_string(bad),
                      "is not text (UTF-8 without NUL bytes)",
                      "pass a UTF-8 text file, or token ids as .u16/.bin/.u32");
  }
  const std::string what = "text file " + path + " (" + std::to_string(bytes.value().size()) + " bytes, vocab 256)";
  return std::unique_ptr<TokenSource>(std::make_unique<MemoryTokens>(std::move(bytes).value(), 1, 256, what));
}

Result<std::unique_ptr<TokenSource>> open_data_file(const std::string& path, int64_t vocab) {
  auto ends_with = [&](const char* ext) {
    const size_t n = std::strlen(ext);
    return path.size() >= n && path.compare(path.size() - n, n, ext) == 0;
  };
  if (ends_with(".txt") || ends_with(".md") || ends_with(".text")) return open_text_file(path);
  if (ends_with(".bin") || ends_with(".u16")) return open_token_file(path, TokenFileType::Uint16, vocab);
  if (ends_with(".u32")) return open_token_file(path, TokenFileType::Uint32, vocab);
  return make_error(path, "--data", path, "unknown data file type",
                    "use .txt (bytes), .bin/.u16 (uint16 tokens) or .u32 (uint32 tokens)");
}

}  // namespace meshplan::exec
