// Attention half of a layer: norm, column-parallel Q/K/V, rotary, causal GQA core, row-parallel O.
#include "executor/model/gemm_stash.h"
#include "executor/model/layer.h"
#include "executor/parallel/context_parallel.h"

namespace meshplan::exec {

namespace {
const GroupContext& cp_of(const LayerContext& ctx) {
  static const GroupContext none;
  return ctx.groups != nullptr ? ctx.groups->cp : none;
}

// Rotary embedding of q or k (B, T, H, D) at each token's position in its sequence.
void rope(const LayerContext& ctx, float* x, int64_t H, bool backward) {
  const LayerDims& d = ctx.dims;
  if (cp_of(ctx).active()) {
    cp_rope(ctx.backend, x, d.B, d.T_full, H, d.D, d.theta, cp_of(ctx), backward);
  } else if (backward) {
    ctx.backend.rope_backward(x, d.B, d.T, H, d.D, d.theta);
  } else {
    ctx.backend.rope_forward(x, d.B, d.T, H, d.D, d.theta);
  }
}
}  // namespace

void attention_forward_half(const LayerContext& ctx, const LayerWeights& w, const float* x,
                            LayerStash& st, bool keep_probs) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  st.rstd1 = Tensor(be, DType::F32, {d.Nl});
  Tensor gathered;
  const GemmOperand h1f =
      norm_column_input(ctx.tp, be, x, w.attn_norm, st.rstd1.f32(), d.Nl, d.C, d.eps, st.h1, gathered);  // (N, C)
  st.q = Tensor(be, DType::F32, {d.N, d.qd()});
  st.k = Tensor(be, DType::F32, {d.N, d.kvd()});
  st.v = Tensor(be, DType::F32, {d.N, d.kvd()});
  {
    GemmOperandReuse reuse(be);  // h1 feeds all three
    be.gemm_typed(false, true, d.N, d.qd(), d.C, 1.0f, h1f, GemmOperand::f32(w.wq), 0.0f, st.q.f32());
    be.gemm_typed(false, true, d.N, d.kvd(), d.C, 1.0f, h1f, GemmOperand::f32(w.wk), 0.0f, st.k.f32());
    be.gemm_typed(false, true, d.N, d.kvd(), d.C, 1.0f, h1f, GemmOperand::f32(w.wv), 0.0f, st.v.f32());
  }
  gathered.reset();
  st.lse = Tensor(be, DType::F32, {d.B, d.nh, d.T});
  if (!cp_of(ctx).active() && be.keeps_bf16_attention_stash(d.attention())) {
    // q, k, v and the output kept as the bf16 the attention reads and writes (gemm_stash.h); q and
    // k rotated straight into bf16.
    Tensor q16(be, DType::BF16, {d.N, d.qd()}), k16(be, DType::BF16, {d.N, d.kvd()});
    be.rope_forward_bf16(q16.data(), st.q.f32(), d.B, d.T, d.nh, d.D, d.theta);
    be.rope_forward_bf16(k16.data(), st.k.f32(), d.B, d.T, d.nkv, d.D, d.theta);
    st.q = std::move(q16);
    st.k = std::move(k16);
    st.v = narrow_to_bf16(be, std::move(st.v));
    st.att = Tensor(be, DType::BF16, {d.N, d.qd()});
    if (keep_probs) st.probs = Tensor(be, DType::F32, {d.B, d.nh, d.T, d.T});
    be.attention_forward_bf16(st.att.data(), st.lse.f32(), keep_probs ? st.probs.f32() : nullptr, st.q.data(),
                              st.k.data(), st.v.data(), d.attention());
  } else if (cp_of(ctx).active()) {  // ring attention: the softmax is never kept whole
    rope(ctx, st.q.f32(), d.nh, false);
    rope(ctx, st.k.f32(), d.nkv, false);
    st.att = Tensor(be, DType::F32, {d.N, d.qd()});
    cp_attention_forward(be, cp_of(ctx), st.att.f32(), st.lse.f32(), st.q.f32(), st.k.f32(),
                         st.v.f32(), d.cp_attention());
  } else {
    rope(ctx, st.q.f32(), d.nh, false);
    rope(ctx, st.k.f32(), d.nkv, false);
    st.att = Tensor(be, DType::F32, {d.N, d.qd()});
    if (keep_probs) st.probs = Tensor(be, DType::F32, {d.B, d.nh, d.T, d.T});
    be.attention_forward(st.att.f32(), st.lse.f32(), keep_probs ? st.probs.f32() : nullptr,
                         st.q.f32(), st.k.f32(), st.v.f32(), d.attention());
  }
  Tensor o_part(be, DType::F32, {d.N, d.C});  // partial sums over this rank's heads
  be.gemm_typed(false, true, d.N, d.C, d.qd(), 1.0f, GemmOperand::of(st.att), GemmOperand::f32(w.wo), 0.0f,
                o_part.f32());
  Tensor reduced;
  const float* o = ctx.tp.reduce_partial(o_part.f32(), reduced);  // (Nl, C)
  st.x_mid = Tensor(be, DType::F32, {d.Nl, d.C});
  be.add(st.x_mid.f32(), x, o, d.Nl * d.C);
}

void attention_backward_half(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                             const float* x, const LayerStash& st, float* dres) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  Tensor gathered;
  const float* dfull = ctx.tp.to_full(dres, gathered);  // (N, C) dL/d(o)
  Tensor datt(be, DType::F32, {d.N, d.qd()});
  {
    GemmOperandReuse reuse(be);  // dfull feeds both
    be.gemm(false, false, d.N, d.qd(), d.C, 1.0f, dfull, w.wo, 0.0f, datt.f32());
    be.gemm_typed(true, false, d.C, d.qd(), d.N, 1.0f, GemmOperand::f32(dfull), GemmOperand::of(st.att), 1.0f,
                  g.wo);  // (C, qd)
  }
  gathered.reset();
  Tensor dq(be, DType::F32, {d.N, d.qd()});
  Tensor dk(be, DType::F32, {d.N, d.kvd()});
  Tensor dv(be, DType::F32, {d.N, d.kvd()});
  if (cp_of(ctx).active()) {
    cp_attention_backward(be, cp_of(ctx), dq.f32(), dk.f32(), dv.f32(), datt.f32(), st.q.f32(),
                          st.k.f32(), st.v.f32(), st.att.f32(), st.lse.f32(), d.cp_attention());
  } else if (st.q.dtype() == DType::BF16) {
    be.attention_backward_bf16(dq.f32(), dk.f32(), dv.f32(), datt.f32(), st.q.data(), st.k.data(), st.v.data(),
                               st.att.data(), st.lse.f32(), st.probs.empty() ? nullptr : st.probs.f32(),
                               d.attention());
  } else {
    be.attention_backward(dq.f32(), dk.f32(), dv.f32(), datt.f32(), st.q.f32(), st.k.f32(),
                          st.v.f32(), st.att.f32(), st.lse.f32(), st.probs.empty() ? nullptr : st.probs.f32(),
                          d.attention());
  }
  datt.reset();
  rope(ctx, dq.f32(), d.nh, true);
  rope(ctx, dk.f32(), d.nkv, true);
  const GemmOperand h1f = stashed_column_input(ctx.tp, be, st.h1, gathered);  // (N, C) again (SP re-gathers)
  Tensor dh(be, DType::F32, {d.N, d.C});  // partial over this rank's heads
  {
    GemmOperandReuse reuse(be);  // dq, dk, dv twice each, h1 three times; outputs dh and grads only
    be.gemm(false, false, d.N, d.C, d.qd(), 1.0f, dq.f32(), w.wq, 0.0f, dh.f32());
    be.gemm(false, false, d.N, d.C, d.kvd(), 1.0f, dk.f32(), w.wk, 1.0f, dh.f32());
    be.gemm(false, false, d.N, d.C, d.kvd(), 1.0f, dv.f32(), w.wv, 1.0f, dh.f32());
    be.gemm_typed(true, false, d.qd(), d.C, d.N, 1.0f, GemmOperand::f32(dq.f32()), h1f, 1.0f, g.wq);   // (qd, C)
    be.gemm_typed(true, false, d.kvd(), d.C, d.N, 1.0f, GemmOperand::f32(dk.f32()), h1f, 1.0f, g.wk);  // (kvd, C)
    be.gemm_typed(true, false, d.kvd(), d.C, d.N, 1.0f, GemmOperand::f32(dv.f32()), h1f, 1.0f, g.wv);
  }
  gathered.reset();
  Tensor reduced;
  const float* dh1 = ctx.tp.reduce_partial(dh.f32(), reduced);  // (Nl, C)
  norm_backward(ctx, dres, g.attn_norm, dh1, x, w.attn_norm, st.rstd1.f32(), d.Nl);
}

}  // namespace meshplan::exec
