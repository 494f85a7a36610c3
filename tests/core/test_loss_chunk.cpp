// Vocabulary chunks of meshplan's loss (core/loss_chunk.h): columns per chunk and the chunk count.
#include <catch2/catch.hpp>

#include "core/loss_chunk.h"

using namespace meshplan;

TEST_CASE("loss chunk columns: whole logits without a budget or when they fit, else budget / (4 rows)") {
  CHECK(loss_chunk_columns(16384, 32000, 0) == 32000);                       // no budget: whole
  CHECK(loss_chunk_columns(16, 64, 4096) == 64);                             // 16 x 64 x 4 = 4096: fits exactly
  CHECK(loss_chunk_columns(16, 64, 4095) == 63);                             // one byte short: 63 columns
  CHECK(loss_chunk_columns(16384, 32000, kDefaultLossChunkBytes) == 4096);  // the 1.1B benchmark shape
  CHECK(loss_chunk_columns(1 << 20, 32000, 1024) == 1);                      // never fewer than one column
  CHECK(loss_chunk_count(32000, 4096) == 8);                                 // 7 full chunks and 3,328 columns
  CHECK(loss_chunk_count(64, 64) == 1);
  CHECK(loss_chunk_count(64, 12) == 6);
}
