// The pipeline's ends: vocab-parallel embedding (first chunk) and final norm + vocab-parallel LM
// head + cross-entropy (last chunk), forward and backward.
#pragma once
#include <cstdint>

#include "executor/model/layer.h"

namespace meshplan::exec {

/// Rows [vocab_begin, vocab_begin + Vl) of the embedding / LM head live on this TP rank.
struct VocabShard {
  int64_t begin = 0;
  int64_t size = 0;  // Vl = V / tp
};

struct HeadStash {
  Tensor rstd;     // (Nl)
  Tensor hf;       // (Nl, C) final norm out (LM head input)
  int64_t columns = 0;  // vocabulary columns per loss chunk; < Vl: chunked, no logits kept
  Tensor logits;   // (N, Vl) when one chunk; becomes dlogits in backward
  Tensor row_max;  // (N) over the whole vocabulary
  Tensor stats;    // (2, N): sum-exp, target logit (over the whole vocabulary)
  Tensor losses;   // (N) per-token cross-entropy
  Tensor targets;  // (N) i32
};

/// out (Nl, C) = embedding rows of tokens (N, device), reduced over TP.
void embedding_forward(const LayerContext& ctx, const float* table, const int32_t* tokens,
                       const VocabShard& vs, float* out);
/// dtable (Vl, C) += scatter of dres (Nl, C) (all-gathered first with SP).
void embedding_backward(const LayerContext& ctx, float* dtable, const float* dres,
                        const int32_t* tokens, const VocabShard& vs);

/// Loss of x (Nl, C) against st.targets (set by the caller): fills the rest of st. The logits go in
/// vocabulary chunks of at most loss_chunk_bytes (0: whole; core/loss_chunk.h).
void head_forward(const LayerContext& ctx, const float* final_norm, const float* lm_head,
                  const float* x, const VocabShard& vs, uint64_t loss_chunk_bytes, HeadStash& st);
/// dres (Nl, C) = dL/dx for L = loss_scale * mean(losses). Adds into the gradients. Chunked
/// forwards recompute each chunk's logits here (one more LM-head GEMM).
void head_backward(const LayerContext& ctx, const float* final_norm, const float* lm_head,
                   float* d_final_norm, float* d_lm_head, const float* x, const VocabShard& vs,
                   float loss_scale, HeadStash& st, float* dres);

}  // namespace meshplan::exec
