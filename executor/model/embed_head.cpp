// Vocab-parallel embedding and LM head + cross-entropy (Megatron): logits never leave their rank;
// only the row max (MAX) and the sum-exp and target logit (SUM) cross TP.
#include "executor/model/embed_head.h"

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

void head_forward(const LayerContext& ctx, const float* final_norm, const float* lm_head,
                  const float* x, const VocabShard& vs, HeadStash& st) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  st.rstd = Tensor(be, DType::F32, {d.Nl});
  st.hf = Tensor(be, DType::F32, {d.Nl, d.C});
  be.rmsnorm_forward(st.hf.f32(), st.rstd.f32(), x, final_norm, d.Nl, d.C, d.eps);
  Tensor gathered;
  const float* hff = ctx.tp.to_full(st.hf.f32(), gathered);  // (N, C)
  st.logits = Tensor(be, DType::F32, {d.N, vs.size});
  be.gemm(false, true, d.N, vs.size, d.C, 1.0f, hff, lm_head, 0.0f, st.logits.f32());
  gathered.reset();
  st.row_max = Tensor(be, DType::F32, {d.N});
  be.ce_row_max(st.row_max.f32(), st.logits.f32(), d.N, vs.size);
  ctx.tp.all_reduce(st.row_max.f32(), d.N, ReduceOp::Max);
  st.stats = Tensor(be, DType::F32, {2, d.N});
  float* sumexp = st.stats.f32();
  float* target_logit = st.stats.f32() + d.N;
  be.ce_row_sumexp(sumexp, st.logits.f32(), st.row_max.f32(), d.N, vs.size);
  be.ce_target_logit(target_logit, st.logits.f32(), st.targets.i32(), vs.begin, d.N, vs.size);
  ctx.tp.all_reduce(st.stats.f32(), 2 * d.N, ReduceOp::Sum);
  st.losses = Tensor(be, DType::F32, {d.N});
  be.ce_loss(st.losses.f32(), st.row_max.f32(), sumexp, target_logit, d.N);
}

void head_backward(const LayerContext& ctx, const float* final_norm, const float* lm_head,
                   float* d_final_norm, float* d_lm_head, const float* x, const VocabShard& vs,
                   float loss_scale, HeadStash& st, float* dres) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  float* dlogits = st.logits.f32();  // in place: the logits are not needed afterwards
  be.ce_backward(dlogits, st.logits.f32(), st.row_max.f32(), st.stats.f32(), st.targets.i32(),
                 vs.begin, loss_scale / static_cast<float>(d.N), d.N, vs.size);
  Tensor gathered;
  const float* hff = ctx.tp.to_full(st.hf.f32(), gathered);  // (N, C)
  be.gemm(true, false, vs.size, d.C, d.N, 1.0f, dlogits, hff, 1.0f, d_lm_head);  // (Vl, C)
  gathered.reset();
  Tensor dh(be, DType::F32, {d.N, d.C});  // partial over this rank's vocabulary
  be.gemm(false, false, d.N, d.C, vs.size, 1.0f, dlogits, lm_head, 0.0f, dh.f32());
  st.logits.reset();
  Tensor reduced;
  const float* dhf = ctx.tp.reduce_partial(dh.f32(), reduced);  // (Nl, C)
  be.fill(dres, 0.0f, d.Nl * d.C);
  norm_backward(ctx, dres, d_final_norm, dhf, x, final_norm, st.rstd.f32(), d.Nl);
}

}  // namespace meshplan::exec
