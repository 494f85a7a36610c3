// Vocab-parallel embedding and LM head + cross-entropy (Megatron): logits never leave their rank;
// only the row max (MAX) and the sum-exp and target logit (SUM) cross TP. Above a byte budget the
// logits are computed in vocabulary chunks and recomputed in the backward (core/loss_chunk.h).
#include "executor/model/embed_head.h"

#include <algorithm>
#include <cmath>

#include "core/loss_chunk.h"

namespace meshplan::exec {

void embedding_forward(const LayerContext& ctx, const float* table, const int32_t* tokens,
                       const VocabShard& vs, float* out) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  Tensor part(be, DType::F32, {d.N, d.C});  // zeros for tokens of other ranks' shards
  be.embedding_forward(part.f32(), tokens, table, vs.begin, vs.size, d.N, d.C);
  Tensor reduced;
  const float* x = ctx.tp.reduce_partial(part.f32(), reduced);  // (Nl, C)
  be.copy(out, x, static_cast<uint64_t>(d.Nl * d.C) * 4);
}

void embedding_backward(const LayerContext& ctx, float* dtable, const float* dres,
                        const int32_t* tokens, const VocabShard& vs) {
  const LayerDims& d = ctx.dims;
  Tensor gathered;
  const float* dfull = ctx.tp.to_full(dres, gathered);  // (N, C)
  ctx.backend.embedding_backward(dtable, dfull, tokens, vs.begin, vs.size, d.N, d.C);
}

namespace {
// The whole (N, Vl) logits at once, kept for the backward (one chunk: core/loss_chunk.h).
void whole_loss_forward(const LayerContext& ctx, const float* hff, const float* lm_head, const VocabShard& vs,
                        HeadStash& st) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  st.logits = Tensor(be, DType::F32, {d.N, vs.size});
  be.gemm(false, true, d.N, vs.size, d.C, 1.0f, hff, lm_head, 0.0f, st.logits.f32());
  be.ce_row_max(st.row_max.f32(), st.logits.f32(), d.N, vs.size);
  ctx.tp.all_reduce(st.row_max.f32(), d.N, ReduceOp::Max);
  float* sumexp = st.stats.f32();
  float* target_logit = st.stats.f32() + d.N;
  be.ce_row_sumexp(sumexp, st.logits.f32(), st.row_max.f32(), d.N, vs.size);
  be.ce_target_logit(target_logit, st.logits.f32(), st.targets.i32(), vs.begin, d.N, vs.size);
  ctx.tp.all_reduce(st.stats.f32(), 2 * d.N, ReduceOp::Sum);
}

// Vocabulary chunks of st.columns: each chunk's (max, sum-exp) folded into the running ones (online
// softmax), the target logit picked from the one chunk that holds it; the logits are dropped. Across
// TP the ranks' maxima are all-reduced first and each rank's sum rescaled to the group's maximum
// before the SUM, so row_max and sum-exp end as the unchunked path's (up to rounding).
void chunked_loss_forward(const LayerContext& ctx, const float* hff, const float* lm_head, const VocabShard& vs,
                          HeadStash& st) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  float* row_max = st.row_max.f32();
  float* sumexp = st.stats.f32();
  float* target_logit = st.stats.f32() + d.N;
  be.fill(row_max, -INFINITY, d.N);
  be.fill(st.stats.f32(), 0.0f, 2 * d.N);
  Tensor logits(be, DType::F32, {d.N, st.columns});
  Tensor chunk(be, DType::F32, {3, d.N});  // max, sum-exp, target logit of one chunk
  float* chunk_max = chunk.f32();
  float* chunk_sumexp = chunk.f32() + d.N;
  float* chunk_target = chunk.f32() + 2 * d.N;
  for (int64_t j0 = 0; j0 < vs.size; j0 += st.columns) {
    const int64_t cols = std::min(st.columns, vs.size - j0);
    be.gemm(false, true, d.N, cols, d.C, 1.0f, hff, lm_head + j0 * d.C, 0.0f, logits.f32());
    be.ce_row_max(chunk_max, logits.f32(), d.N, cols);
    be.ce_row_sumexp(chunk_sumexp, logits.f32(), chunk_max, d.N, cols);
    be.ce_merge_stats(row_max, sumexp, chunk_max, chunk_sumexp, d.N);
    be.ce_target_logit(chunk_target, logits.f32(), st.targets.i32(), vs.begin + j0, d.N, cols);
    be.axpy(target_logit, 1.0f, chunk_target, d.N);  // 0 except in the chunk holding the target
  }
  if (ctx.tp.active()) {
    be.copy(chunk_max, row_max, static_cast<uint64_t>(d.N) * 4);       // this rank's max
    be.copy(chunk_sumexp, sumexp, static_cast<uint64_t>(d.N) * 4);    // and sum relative to it
    ctx.tp.all_reduce(row_max, d.N, ReduceOp::Max);
    be.fill(sumexp, 0.0f, d.N);
    be.ce_merge_stats(row_max, sumexp, chunk_max, chunk_sumexp, d.N);  // = sum * exp(max - group max)
    ctx.tp.all_reduce(st.stats.f32(), 2 * d.N, ReduceOp::Sum);
  }
}
}  // namespace

void head_forward(const LayerContext& ctx, const float* final_norm, const float* lm_head,
                  const float* x, const VocabShard& vs, uint64_t loss_chunk_bytes, HeadStash& st) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  st.rstd = Tensor(be, DType::F32, {d.Nl});
  st.hf = Tensor(be, DType::F32, {d.Nl, d.C});
  be.rmsnorm_forward(st.hf.f32(), st.rstd.f32(), x, final_norm, d.Nl, d.C, d.eps);
  Tensor gathered;
  const float* hff = ctx.tp.to_full(st.hf.f32(), gathered);  // (N, C)
  st.columns = loss_chunk_columns(d.N, vs.size, loss_chunk_bytes);
  st.row_max = Tensor(be, DType::F32, {d.N});
  st.stats = Tensor(be, DType::F32, {2, d.N});
  if (st.columns < vs.size) chunked_loss_forward(ctx, hff, lm_head, vs, st);
  else whole_loss_forward(ctx, hff, lm_head, vs, st);
  gathered.reset();
  st.losses = Tensor(be, DType::F32, {d.N});
  be.ce_loss(st.losses.f32(), st.row_max.f32(), st.stats.f32(), st.stats.f32() + d.N, d.N);
}

void head_backward(const LayerContext& ctx, const float* final_norm, const float* lm_head,
                   float* d_final_norm, float* d_lm_head, const float* x, const VocabShard& vs,
                   float loss_scale, HeadStash& st, float* dres) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  const float scale = loss_scale / static_cast<float>(d.N);
  Tensor gathered;
  const float* hff = ctx.tp.to_full(st.hf.f32(), gathered);  // (N, C)
  Tensor dh;  // (N, C), partial over this rank's vocabulary
  if (st.columns < vs.size) {
    // Chunked: recompute each chunk's logits, turn them into dlogits in place, and add the chunk's
    // share to d(lm_head) rows [j0, j0 + cols) and to dh (the gathered input stays for every chunk).
    dh = Tensor(be, DType::F32, {d.N, d.C});
    Tensor chunk(be, DType::F32, {d.N, st.columns});
    for (int64_t j0 = 0; j0 < vs.size; j0 += st.columns) {
      const int64_t cols = std::min(st.columns, vs.size - j0);
      float* dl = chunk.f32();
      be.gemm(false, true, d.N, cols, d.C, 1.0f, hff, lm_head + j0 * d.C, 0.0f, dl);
      be.ce_backward(dl, dl, st.row_max.f32(), st.stats.f32(), st.targets.i32(), vs.begin + j0, scale, d.N, cols);
      be.gemm(true, false, cols, d.C, d.N, 1.0f, dl, hff, 1.0f, d_lm_head + j0 * d.C);  // (cols, C)
      be.gemm(false, false, d.N, d.C, cols, 1.0f, dl, lm_head + j0 * d.C, j0 == 0 ? 0.0f : 1.0f, dh.f32());
    }
  } else {
    float* dlogits = st.logits.f32();  // in place: the logits are not needed afterwards
    be.ce_backward(dlogits, st.logits.f32(), st.row_max.f32(), st.stats.f32(), st.targets.i32(),
                   vs.begin, scale, d.N, vs.size);
    be.gemm(true, false, vs.size, d.C, d.N, 1.0f, dlogits, hff, 1.0f, d_lm_head);  // (Vl, C)
    gathered.reset();  // before dh: the gathered input and dh are never alive together here
    dh = Tensor(be, DType::F32, {d.N, d.C});
    be.gemm(false, false, d.N, d.C, vs.size, 1.0f, dlogits, lm_head, 0.0f, dh.f32());
    st.logits.reset();
  }
  gathered.reset();
  Tensor reduced;
  const float* dhf = ctx.tp.reduce_partial(dh.f32(), reduced);  // (Nl, C)
  be.fill(dres, 0.0f, d.Nl * d.C);
  norm_backward(ctx, dres, d_final_norm, dhf, x, final_norm, st.rstd.f32(), d.Nl);
}

}  // namespace meshplan::exec
