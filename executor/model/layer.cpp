// A transformer layer = attention half + MLP half; tensor offsets inside a layer block.
#include "executor/model/layer.h"

#include <cassert>

namespace meshplan::exec {

LayerOffsets layer_offsets(const ParamLayout& layout, int block) {
  const ParamBlock& b = layout.blocks[block];
  auto off = [&](const char* base) {
    const ParamView* v = layout.find(b.name + "." + base);
    assert(v != nullptr && v->block == block);
    return v->offset - b.offset;
  };
  return LayerOffsets{off("attn_norm"), off("wq"),     off("wk"),   off("wv"),    off("wo"),
                      off("mlp_norm"),  off("w_gate"), off("w_up"), off("w_down")};
}

LayerWeights layer_weights(const float* p, const LayerOffsets& o) {
  return LayerWeights{p + o.attn_norm, p + o.wq,     p + o.wk,   p + o.wv,    p + o.wo,
                      p + o.mlp_norm,  p + o.w_gate, p + o.w_up, p + o.w_down};
}

LayerGrads layer_grads(float* p, const LayerOffsets& o) {
  return LayerGrads{p + o.attn_norm, p + o.wq,     p + o.wk,   p + o.wv,    p + o.wo,
                    p + o.mlp_norm,  p + o.w_gate, p + o.w_up, p + o.w_down};
}

void layer_forward(const LayerContext& ctx, const LayerWeights& w, const float* x, float* y,
                   LayerStash& st, bool keep_probs) {
  attention_forward_half(ctx, w, x, st, keep_probs);
  mlp_forward_half(ctx, w, y, st);
}

void layer_backward(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                    const float* x, const LayerStash& st, float* dres) {
  mlp_backward_half(ctx, w, g, st, dres);
  attention_backward_half(ctx, w, g, x, st, dres);
}

void norm_backward(const LayerContext& ctx, float* dx, float* dw, const float* dout,
                   const float* x, const float* w, const float* rstd, int64_t rows) {
  Backend& be = ctx.backend;
  const int64_t C = ctx.dims.C;
  if (rows == ctx.dims.N || !ctx.tp.active()) {
    be.rmsnorm_backward(dx, dw, dout, x, w, rstd, rows, C);
    return;
  }
  // Sequence parallel: this rank saw only its rows, so its gain gradient is a partial sum.
  Tensor part(be, DType::F32, {C});
  be.fill(part.f32(), 0.0f, C);
  be.rmsnorm_backward(dx, part.f32(), dout, x, w, rstd, rows, C);
  ctx.tp.sum_replicated_grad(part.f32(), C);
  be.axpy(dw, 1.0f, part.f32(), C);
}

}  // namespace meshplan::exec
