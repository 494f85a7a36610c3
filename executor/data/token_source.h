// Token sources: synthetic seeded tokens, a binary token file (uint16/uint32, raw or llm.c header),
// or a text file read as bytes (vocab 256). All are random-access and read-only.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "core/error.h"

namespace meshplan::exec {

class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int64_t vocab_size() const = 0;  // every token is < this
  virtual int64_t num_tokens() const = 0;
  virtual std::string describe() const = 0;  // "text file x.txt (123456 bytes)"
  /// out (n) = tokens [start, start + n); asserts start + n <= num_tokens().
  virtual void read(int64_t start, int64_t n, int32_t* out) const = 0;
};

/// A seeded first-order Markov chain over `vocab` tokens: each token has 4 likely successors
/// chosen by hash(seed, token), so the loss can fall from ln(vocab) towards ~ln(4).
std::unique_ptr<TokenSource> make_synthetic_tokens(int64_t vocab, uint64_t seed);

enum class TokenFileType { Uint16, Uint32 };

/// Binary token file. A file starting with llm.c's header (int32 magic 20240520, version, count,
/// 256 int32 in all) is read after it as uint16; otherwise the whole file is raw `type` tokens.
/// Errors (file, "tokens", ...) when unreadable, empty, or a token >= vocab.
Result<std::unique_ptr<TokenSource>> open_token_file(const std::string& path, TokenFileType type,
                                                     int64_t vocab);

/// A text file as bytes: token = byte value, vocab 256.
Result<std::unique_ptr<TokenSource>> open_text_file(const std::string& path);

/// By extension: .txt/.md/.text -> text bytes; .bin/.u16 -> uint16; .u32 -> uint32.
Result<std::unique_ptr<TokenSource>> open_data_file(const std::string& path, int64_t vocab);

}  // namespace meshplan::exec
