// A transformer layer = attention half + MLP half; tensor offsets inside a layer block.
#include "executor/model/layer.h"

#include <cassert>

namespace meshplan::exec {

LayerOffsets layer_offsets(const ParamLayout& layout, int block) {
  const ParamBlock& b = layout.blocks[block];
  auto off = [&](const char* base) -> int64_t {
    const ParamView* v = layout.find(b.name + "." + base);
    if (v == nullptr) return -1;  // the other MLP kind's tensor
    assert(v->block == block);
    return v->offset - b.offset;
  };
  LayerOffsets o{off("attn_norm"), off("wq"),     off("wk"),   off("wv"),    off("wo"),
                 off("mlp_norm"),  off("w_gate"), off("w_up"), off("w_down")};
  o.router = off("router");
  o.expert_gate = off("expert_gate");
  o.expert_up = off("expert_up");
  o.expert_down = off("expert_down");
  assert(o.wq >= 0 && (o.moe() ? o.expert_down >= 0 : o.w_down >= 0));
  return o;
}

namespace {
template <class P>
LayerTensors<P> tensors_at(P p, const LayerOffsets& o) {
  auto at = [&](int64_t off) -> P { return off >= 0 ? p + off : nullptr; };
  LayerTensors<P> t{at(o.attn_norm), at(o.wq),     at(o.wk),   at(o.wv),    at(o.wo),
                    at(o.mlp_norm),  at(o.w_gate), at(o.w_up), at(o.w_down)};
  t.router = at(o.router);
  t.expert_gate = at(o.expert_gate);
  t.expert_up = at(o.expert_up);
  t.expert_down = at(o.expert_down);
  return t;
}
}  // namespace

LayerWeights layer_weights(const float* p, const LayerOffsets& o) { return tensors_at(p, o); }

LayerGrads layer_grads(float* p, const LayerOffsets& o) { return tensors_at(p, o); }

void layer_forward(const LayerContext& ctx, const LayerWeights& w, const float* x, float* y,
                   LayerStash& st, bool keep_probs) {
  attention_forward_half(ctx, w, x, st, keep_probs);
  if (w.router != nullptr) {
    moe_forward_half(ctx, w, y, st);
  } else {
    mlp_forward_half(ctx, w, y, st);
  }
}

void layer_backward(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                    const float* x, const LayerStash& st, float* dres) {
  if (w.router != nullptr) {
    moe_backward_half(ctx, w, g, st, dres);
  } else {
    mlp_backward_half(ctx, w, g, st, dres);
  }
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
