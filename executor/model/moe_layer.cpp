// MoE MLP half of a layer: norm, top-k router, dispatch of token rows to the experts' EP ranks by
// all-to-all, SwiGLU experts (per source rank and local expert), combine back by all-to-all and
// the gate-weighted sum; backward retraces the same exchanges (Megatron-Core's alltoall dispatcher).
#include <cassert>

#include "executor/model/layer.h"
#include "executor/model/moe_layer.h"

namespace meshplan::exec {

namespace {

const GroupContext& ep_of(const LayerContext& ctx) {
  static const GroupContext none;
  return ctx.groups != nullptr ? ctx.groups->ep : none;
}

// Calls fn(row, rows, local_expert) for each non-empty block of the received rows.
template <class Fn>
void for_each_segment(const DispatchPlan& plan, Fn fn) {
  int64_t row = 0;
  for (size_t i = 0; i < plan.recv_counts.size(); ++i) {
    const int64_t rows = plan.recv_counts[i];
    if (rows > 0) fn(row, rows, static_cast<int64_t>(i) % plan.local_experts);
    row += rows;
  }
}

}  // namespace

void moe_forward_half(const LayerContext& ctx, const LayerWeights& w, float* y, LayerStash& st) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  assert(!ctx.tp.active() && "validate_chunk: MoE layers need tp == 1");
  const int64_t N = d.N, C = d.C, E = d.experts, k = d.top_k, Fe = d.fe;
  st.rstd2 = Tensor(be, DType::F32, {N});
  st.h2 = Tensor(be, DType::F32, {N, C});
  be.rmsnorm_forward(st.h2.f32(), st.rstd2.f32(), st.x_mid.f32(), w.mlp_norm, N, C, d.eps);
  auto ms = std::make_shared<MoeStash>();
  {
    Tensor logits(be, DType::F32, {N, E});
    be.gemm(false, true, N, E, C, 1.0f, st.h2.f32(), w.router, 0.0f, logits.f32());
    std::vector<float> host(static_cast<size_t>(N * E));
    be.copy_to_host(host.data(), logits.f32(), logits.bytes());
    ms->routing = route_top_k(host, N, E, k);
  }
  ms->plan = plan_dispatch(ms->routing, E, ep_of(ctx));
  const DispatchPlan& plan = ms->plan;
  const int64_t R = plan.total_received();
  Tensor send(be, DType::F32, {N * k, C});
  for (int64_t s = 0; s < N * k; ++s) {
    be.copy(send.f32() + plan.send_pos[s] * C, st.h2.f32() + (s / k) * C, C * 4);
  }
  ms->recv_x = Tensor(be, DType::F32, {R, C});
  exchange_rows(plan, ep_of(ctx), send.f32(), ms->recv_x.f32(), C, false, be);
  ms->gate = Tensor(be, DType::F32, {R, Fe});
  ms->up = Tensor(be, DType::F32, {R, Fe});
  ms->act = Tensor(be, DType::F32, {R, Fe});
  Tensor out(be, DType::F32, {R, C});
  for_each_segment(plan, [&](int64_t row, int64_t rows, int64_t e) {
    const float* x = ms->recv_x.f32() + row * C;
    float* g = ms->gate.f32() + row * Fe;
    float* u = ms->up.f32() + row * Fe;
    float* a = ms->act.f32() + row * Fe;
    be.gemm(false, true, rows, Fe, C, 1.0f, x, w.expert_gate + e * Fe * C, 0.0f, g);
    be.gemm(false, true, rows, Fe, C, 1.0f, x, w.expert_up + e * Fe * C, 0.0f, u);
    be.swiglu_forward(a, g, u, rows * Fe);
    be.gemm(false, true, rows, C, Fe, 1.0f, a, w.expert_down + e * C * Fe, 0.0f, out.f32() + row * C);
  });
  ms->combined = Tensor(be, DType::F32, {N * k, C});
  exchange_rows(plan, ep_of(ctx), out.f32(), ms->combined.f32(), C, true, be);
  // y = x_mid + sum_j gate_j * expert_j(h2), slots in order so every layout sums alike.
  be.copy(y, st.x_mid.f32(), static_cast<uint64_t>(N * C) * 4);
  for (int64_t s = 0; s < N * k; ++s) {
    be.axpy(y + (s / k) * C, ms->routing.gate[s], ms->combined.f32() + plan.send_pos[s] * C, C);
  }
  st.moe = std::move(ms);
}

void moe_backward_half(const LayerContext& ctx, const LayerWeights& w, const LayerGrads& g,
                       const LayerStash& st, float* dres) {
  Backend& be = ctx.backend;
  const LayerDims& d = ctx.dims;
  const MoeStash& ms = *st.moe;
  const DispatchPlan& plan = ms.plan;
  const int64_t N = d.N, C = d.C, E = d.experts, k = d.top_k, Fe = d.fe;
  const int64_t R = plan.total_received();
  // dL/d(expert output row) = gate * dy; dL/d(gate) = <dy, expert output row> (host, double).
  std::vector<double> dgate(static_cast<size_t>(N * k));
  {
    std::vector<float> dy(static_cast<size_t>(N * C)), comb(static_cast<size_t>(N * k * C));
    be.copy_to_host(dy.data(), dres, dy.size() * 4);
    be.copy_to_host(comb.data(), ms.combined.f32(), comb.size() * 4);
    for (int64_t s = 0; s < N * k; ++s) {
      double dot = 0;
      const float* a = dy.data() + (s / k) * C;
      const float* b = comb.data() + plan.send_pos[s] * C;
      for (int64_t c = 0; c < C; ++c) dot += static_cast<double>(a[c]) * b[c];
      dgate[s] = dot;
    }
  }
  Tensor dcomb(be, DType::F32, {N * k, C});
  for (int64_t s = 0; s < N * k; ++s) {
    float* row = dcomb.f32() + plan.send_pos[s] * C;
    be.copy(row, dres + (s / k) * C, C * 4);
    be.scale(row, ms.routing.gate[s], C);
  }
  Tensor dout(be, DType::F32, {R, C});
  exchange_rows(plan, ep_of(ctx), dcomb.f32(), dout.f32(), C, false, be);
  dcomb.reset();
  Tensor dx(be, DType::F32, {R, C});
  {
    Tensor dact(be, DType::F32, {R, Fe}), dg(be, DType::F32, {R, Fe}), du(be, DType::F32, {R, Fe});
    for_each_segment(plan, [&](int64_t row, int64_t rows, int64_t e) {
      const float* go = dout.f32() + row * C;
      const float* x = ms.recv_x.f32() + row * C;
      float* da = dact.f32() + row * Fe;
      float* dgs = dg.f32() + row * Fe;
      float* dus = du.f32() + row * Fe;
      be.gemm(false, false, rows, Fe, C, 1.0f, go, w.expert_down + e * C * Fe, 0.0f, da);
      be.gemm(true, false, C, Fe, rows, 1.0f, go, ms.act.f32() + row * Fe, 1.0f,
              g.expert_down + e * C * Fe);
      be.swiglu_backward(dgs, dus, da, ms.gate.f32() + row * Fe, ms.up.f32() + row * Fe, rows * Fe);
      float* dxs = dx.f32() + row * C;
      be.gemm(false, false, rows, C, Fe, 1.0f, dgs, w.expert_gate + e * Fe * C, 0.0f, dxs);
      be.gemm(false, false, rows, C, Fe, 1.0f, dus, w.expert_up + e * Fe * C, 1.0f, dxs);
      be.gemm(true, false, Fe, C, rows, 1.0f, dgs, x, 1.0f, g.expert_gate + e * Fe * C);
      be.gemm(true, false, Fe, C, rows, 1.0f, dus, x, 1.0f, g.expert_up + e * Fe * C);
    });
  }
  dout.reset();
  Tensor dsend(be, DType::F32, {N * k, C});
  exchange_rows(plan, ep_of(ctx), dx.f32(), dsend.f32(), C, true, be);
  dx.reset();
  Tensor dh2(be, DType::F32, {N, C});
  be.fill(dh2.f32(), 0.0f, N * C);
  for (int64_t s = 0; s < N * k; ++s) {
    be.axpy(dh2.f32() + (s / k) * C, 1.0f, dsend.f32() + plan.send_pos[s] * C, C);
  }
  dsend.reset();
  // Router: dlogits (N, E); dh2 += dlogits @ router, d(router) += dlogits^T @ h2.
  const std::vector<float> dl_host = router_backward(ms.routing, dgate, E);
  Tensor dlogits(be, DType::F32, {N, E});
  be.copy_from_host(dlogits.f32(), dl_host.data(), dlogits.bytes());
  be.gemm(false, false, N, C, E, 1.0f, dlogits.f32(), w.router, 1.0f, dh2.f32());
  be.gemm(true, false, E, C, N, 1.0f, dlogits.f32(), st.h2.f32(), 1.0f, g.router);
  norm_backward(ctx, dres, g.mlp_norm, dh2.f32(), st.x_mid.f32(), w.mlp_norm, st.rstd2.f32(), N);
}

}  // namespace meshplan::exec
