// Micro-batches from a token source. Sequences are windows of T+1 tokens at stride T; each step
// consumes dp*M*B consecutive windows, and DP rank d takes a disjoint, interleaved share of them,
// so dp ranks with M micro-batches see exactly the windows one rank with dp*M micro-batches sees.
#pragma once
#include <cstdint>

#include "core/error.h"
#include "executor/data/token_source.h"

namespace meshplan::exec {

struct BatchCoord {
  int64_t step = 0;
  int64_t micro_batch = 0;        // 0..M-1
  int64_t num_micro_batches = 1;  // M per DP rank
  int dp_rank = 0;
  int dp_size = 1;
  int64_t batch = 1;              // B sequences per micro-batch
  int64_t seq_len = 1;            // T
};

/// Global window index of row b: ((step*M + micro_batch)*dp + dp_rank)*B + b, wrapped around the
/// number of windows the source holds.
int64_t window_index(const BatchCoord& c, int64_t b, int64_t num_windows);

/// Windows of T+1 tokens the source holds: (num_tokens - 1) / T.
int64_t num_windows(const TokenSource& src, int64_t seq_len);

/// Error when the source cannot give one window of seq_len + 1 tokens, or its vocab exceeds the
/// model's.
ErrorList validate_source(const TokenSource& src, int64_t seq_len, int64_t model_vocab,
                          const std::string& where);

/// inputs (B, T) and targets (B, T) (= inputs shifted by one) of this DP rank's micro-batch; host.
void load_micro_batch(const TokenSource& src, const BatchCoord& c, int32_t* inputs,
                      int32_t* targets);

}  // namespace meshplan::exec
