// MLP half of a layer: norm, column-parallel gate/up, SwiGLU, row-parallel down projection.
#include "executor/model/gemm_stash.h"
#include "executor/model/layer.h"

namespace meshplan::exec {

void mlp_forward_half(const LayerContext& ctx, const LayerWeights& w, float* y, LayerStash& st) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  st.rstd2 = Tensor(be, DType::F32, {d.Nl});
  Tensor gathered;
  const GemmOperand h2f = norm_column_input(ctx.tp, be, st.x_mid.f32(), w.mlp_norm, st.rstd2.f32(), d.Nl, d.C,
                                            d.eps, st.h2, gathered);  // (N, C)
  st.gate = Tensor(be, DType::F32, {d.N, d.f});
  st.up = Tensor(be, DType::F32, {d.N, d.f});
  {
    GemmOperandReuse reuse(be);  // h2 feeds both
    be.gemm_typed(false, true, d.N, d.f, d.C, 1.0f, h2f, GemmOperand::f32(w.w_gate), 0.0f, st.gate.f32());
    be.gemm_typed(false, true, d.N, d.f, d.C, 1.0f, h2f, GemmOperand::f32(w.w_up), 0.0f, st.up.f32());
  }
  gathered.reset();
  st.act = swiglu_gemm_input(be, st.gate, st.up);  // (N, f)
  Tensor down_part(be, DType::F32, {d.N, d.C});  // partial over this rank's MLP columns
  be.gemm_typed(false, true, d.N, d.C, d.f, 1.0f, GemmOperand::of(st.act), GemmOperand::f32(w.w_down), 0.0f,
                down_part.f32());
  Tensor reduced;
  const float* down = ctx.tp.reduce_partial(down_part.f32(), reduced);  // (Nl, C)
  be.add(y, st.x_mid.f32(), down, d.Nl * d.C);
}

void mlp_backward_half(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                       const LayerStash& st, float* dres) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  Tensor gathered;
  const float* dfull = ctx.tp.to_full(dres, gathered);  // (N, C) dL/d(down)
  Tensor dact(be, DType::F32, {d.N, d.f});
  {
    GemmOperandReuse reuse(be);  // dfull feeds both
    be.gemm(false, false, d.N, d.f, d.C, 1.0f, dfull, w.w_down, 0.0f, dact.f32());
    be.gemm_typed(true, false, d.C, d.f, d.N, 1.0f, GemmOperand::f32(dfull), GemmOperand::of(st.act), 1.0f,
                  g.w_down);  // (C, f)
  }
  gathered.reset();
  Tensor dgate(be, DType::F32, {d.N, d.f});
  Tensor dup(be, DType::F32, {d.N, d.f});
  be.swiglu_backward(dgate.f32(), dup.f32(), dact.f32(), st.gate.f32(), st.up.f32(), d.N * d.f);
  dact.reset();
  const GemmOperand h2f = stashed_column_input(ctx.tp, be, st.h2, gathered);  // (N, C)
  Tensor dh(be, DType::F32, {d.N, d.C});
  {
    GemmOperandReuse reuse(be);  // dgate, dup twice each, h2 twice; outputs dh and grads only
    be.gemm(false, false, d.N, d.C, d.f, 1.0f, dgate.f32(), w.w_gate, 0.0f, dh.f32());
    be.gemm(false, false, d.N, d.C, d.f, 1.0f, dup.f32(), w.w_up, 1.0f, dh.f32());
    be.gemm_typed(true, false, d.f, d.C, d.N, 1.0f, GemmOperand::f32(dgate.f32()), h2f, 1.0f, g.w_gate);  // (f, C)
    be.gemm_typed(true, false, d.f, d.C, d.N, 1.0f, GemmOperand::f32(dup.f32()), h2f, 1.0f, g.w_up);
  }
  gathered.reset();
  Tensor reduced;
  const float* dh2 = ctx.tp.reduce_partial(dh.f32(), reduced);  // (Nl, C)
  norm_backward(ctx, dres, g.mlp_norm, dh2, st.x_mid.f32(), w.mlp_norm, st.rstd2.f32(), d.Nl);
}

}  // namespace meshplan::exec
