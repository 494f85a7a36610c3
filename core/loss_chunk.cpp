// Vocabulary chunks of the executor's loss (core/loss_chunk.h).
#include "core/loss_chunk.h"

#include <algorithm>
#include <cassert>

namespace meshplan {

int64_t loss_chunk_columns(int64_t rows, int64_t vocab_local, uint64_t budget_bytes) {
  assert(rows >= 1 && vocab_local >= 1);
  if (budget_bytes == 0) return vocab_local;
  // 4 * rows * vocab_local may not fit 64 bits only for absurd shapes; compare by division.
  const uint64_t row_bytes = 4 * static_cast<uint64_t>(rows);
  const uint64_t fit = budget_bytes / row_bytes;  // whole columns within the budget
  if (fit >= static_cast<uint64_t>(vocab_local)) return vocab_local;
  return std::max<int64_t>(1, static_cast<int64_t>(fit));
}

int64_t loss_chunk_count(int64_t vocab_local, int64_t columns) {
  assert(columns >= 1);
  return (vocab_local + columns - 1) / columns;
}

LossChunks loss_chunks(int64_t rows, int64_t vocab_local, uint64_t budget_bytes) {
  LossChunks c;
  c.columns = loss_chunk_columns(rows, vocab_local, budget_bytes);
  c.chunks = loss_chunk_count(vocab_local, c.columns);
  return c;
}

}  // namespace meshplan
