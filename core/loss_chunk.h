// How meshplan's executor splits the LM head's logits into vocabulary chunks (run --loss-chunk-mib).
#pragma once
#include <cstdint>

namespace meshplan {

/// Default budget of one chunk of fp32 logits, bytes (`meshplan run --loss-chunk-mib 256`). At the
/// 1.1B benchmark shape (micro-batch 8 x 2048 tokens = 16,384 rows, 32,000-token vocabulary) the
/// whole logits are 2.1 GB, each chunk 4,096 columns (268 MB): 1.8 GB less at the peak for one more
/// LM-head GEMM per micro-batch (2 N V C FLOPs, about 1 % of that step).
constexpr uint64_t kDefaultLossChunkBytes = uint64_t{256} << 20;

/// Vocabulary columns per chunk of the (rows, vocab_local) fp32 logits under `budget_bytes`:
///   vocab_local when the budget is 0 or the whole logits fit in it (one chunk: the forward keeps
///   them for the backward, as every framework's loss does);
///   else max(1, floor(budget / (4 rows))) (chunks: the forward keeps only each row's max, sum of
///   exponentials and target logit; the backward recomputes each chunk's logits).
int64_t loss_chunk_columns(int64_t rows, int64_t vocab_local, uint64_t budget_bytes);

/// ceil(vocab_local / columns): the chunks of one micro-batch's loss.
int64_t loss_chunk_count(int64_t vocab_local, int64_t columns);

/// Both at once, for (rows, vocab_local) fp32 logits under `budget_bytes`.
struct LossChunks {
  int64_t columns = 0;
  int64_t chunks = 1;
};
LossChunks loss_chunks(int64_t rows, int64_t vocab_local, uint64_t budget_bytes);

}  // namespace meshplan
