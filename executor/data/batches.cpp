// Micro-batches as windows of T+1 tokens; DP ranks take disjoint interleaved windows.
#include "executor/data/batches.h"

#include <cassert>
#include <vector>

namespace meshplan::exec {

int64_t num_windows(const TokenSource& src, int64_t seq_len) {
  assert(seq_len > 0);
  return src.num_tokens() > seq_len ? (src.num_tokens() - 1) / seq_len : 0;
}

int64_t window_index(const BatchCoord& c, int64_t b, int64_t windows) {
  assert(windows > 0 && b >= 0 && b < c.batch);
  const int64_t global = ((c.step * c.num_micro_batches + c.micro_batch) * c.dp_size + c.dp_rank) * c.batch + b;
  return global % windows;
}

ErrorList validate_source(const TokenSource& src, int64_t seq_len, int64_t model_vocab,
                          const std::string& where) {
  ErrorList errs;
  if (num_windows(src, seq_len) == 0) {
    errs.push_back(make_error(where, "data", src.describe(),
                              "holds " + std::to_string(src.num_tokens()) + " tokens; one sequence needs " +
                                  std::to_string(seq_len + 1),
                              "use a longer file or a shorter --seq"));
  }
  if (src.vocab_size() > model_vocab) {
    errs.push_back(make_error(where, "vocab_size", std::to_string(model_vocab),
                              "the data uses " + std::to_string(src.vocab_size()) + " token ids",
                              "a text file needs vocab_size >= 256"));
  }
  return errs;
}

void load_micro_batch(const TokenSource& src, const BatchCoord& c, int32_t* inputs,
                      int32_t* targets) {
  const int64_t T = c.seq_len;
  const int64_t windows = num_windows(src, T);
  std::vector<int32_t> window(static_cast<size_t>(T + 1));
  for (int64_t b = 0; b < c.batch; ++b) {
    src.read(window_index(c, b, windows) * T, T + 1, window.data());
    for (int64_t t = 0; t < T; ++t) {
      inputs[b * T + t] = window[t];
      targets[b * T + t] = window[t + 1];
    }
  }
}

}  // namespace meshplan::exec
