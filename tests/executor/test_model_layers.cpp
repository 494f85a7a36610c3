// Every layer's backward (attention half, MLP half, whole layer, embedding, head + loss) against
// central finite differences of its forward, on small shapes with large weights.
#include <catch2/catch.hpp>

#include "exec_test_util.h"
#include "executor/model/embed_head.h"
#include "executor/model/layer.h"

using namespace meshplan::exec;
using namespace exec_test;

namespace {

LayerDims small_dims() {
  LayerDims d;
  d.B = 2, d.T = 4, d.C = 8, d.nh = 2, d.nkv = 1, d.D = 4, d.f = 12;
  d.N = d.Nl = d.B * d.T;
  return d;
}

// One layer's weights in a host vector with the model's offsets (order of param_layout.cpp).
struct Weights {
  LayerOffsets o{};
  std::vector<float> flat;
  explicit Weights(const LayerDims& d) {
    int64_t at = 0;
    auto take = [&](int64_t n) { const int64_t here = at; at += n; return here; };
    o.attn_norm = take(d.C);
    o.wq = take(d.qd() * d.C);
    o.wk = take(d.kvd() * d.C);
    o.wv = take(d.kvd() * d.C);
    o.wo = take(d.C * d.qd());
    o.mlp_norm = take(d.C);
    o.w_gate = take(d.f * d.C);
    o.w_up = take(d.f * d.C);
    o.w_down = take(d.C * d.f);
    flat = randn(at, 81, 0.4f);
    for (int64_t c = 0; c < d.C; ++c) flat[o.attn_norm + c] += 1.0f, flat[o.mlp_norm + c] += 1.0f;
  }
};

// Splits a flat gradient/parameter vector into the named tensors for error reporting.
std::vector<std::pair<const char*, std::pair<int64_t, int64_t>>> ranges(const Weights& w,
                                                                        const LayerDims& d) {
  const LayerOffsets& o = w.o;
  return {{"attn_norm", {o.attn_norm, d.C}},       {"wq", {o.wq, d.qd() * d.C}},
          {"wk", {o.wk, d.kvd() * d.C}},           {"wv", {o.wv, d.kvd() * d.C}},
          {"wo", {o.wo, d.C * d.qd()}},            {"mlp_norm", {o.mlp_norm, d.C}},
          {"w_gate", {o.w_gate, d.f * d.C}},       {"w_up", {o.w_up, d.f * d.C}},
          {"w_down", {o.w_down, d.C * d.f}}};
}

}  // namespace

TEST_CASE("layer backward matches finite differences for every tensor", "[executor][model]") {
  auto be = make_cpu_backend();
  const LayerDims d = small_dims();
  TpOps ops(*be, TpContext{}, d.N, d.C);
  const LayerContext ctx{*be, ops, d};
  Weights w(d);
  auto x = randn(d.N * d.C, 82);
  const auto probe = randn(d.N * d.C, 83);
  std::vector<float> y(d.N * d.C);
  auto loss = [&] {
    LayerStash st;
    layer_forward(ctx, layer_weights(w.flat.data(), w.o), x.data(), y.data(), st, false);
    return dot(y, probe);
  };
  for (bool keep_probs : {true, false}) {
    LayerStash st;
    layer_forward(ctx, layer_weights(w.flat.data(), w.o), x.data(), y.data(), st, keep_probs);
    std::vector<float> grads(w.flat.size(), 0.0f), dres = probe;
    layer_backward(ctx, layer_weights(w.flat.data(), w.o), layer_grads(grads.data(), w.o), x.data(),
                   st, dres.data());
    INFO("keep_probs " << keep_probs);
    CHECK(fd_error(x, dres, loss, 64, 1e-2f) < 2e-3);
    for (const auto& [name, r] : ranges(w, d)) {
      std::vector<float> p(w.flat.begin() + r.first, w.flat.begin() + r.first + r.second);
      std::vector<float> g(grads.begin() + r.first, grads.begin() + r.first + r.second);
      const auto offset = r.first;  // C++17 lambdas cannot capture a structured binding (clang)
      auto loss_p = [&] {
        std::copy(p.begin(), p.end(), w.flat.begin() + offset);
        return loss();
      };
      INFO(name);
      CHECK(fd_error(p, g, loss_p, 24, 1e-2f) < 2e-3);
      std::copy(p.begin(), p.end(), w.flat.begin() + r.first);
    }
  }
}

TEST_CASE("embedding and head + cross-entropy backward match finite differences", "[executor][model]") {
  auto be = make_cpu_backend();
  LayerDims d = small_dims();
  const int64_t V = 10;
  TpOps ops(*be, TpContext{}, d.N, d.C);
  const LayerContext ctx{*be, ops, d};
  auto x = randn(d.N * d.C, 91);
  auto norm = randn(d.C, 92, 0.3f);
  for (float& g : norm) g += 1.0f;
  auto head = randn(V * d.C, 93, 0.5f);
  const auto targets = rand_tokens(d.N, V, 94);
  const VocabShard vs{0, V};
  // Whole logits, and vocabulary chunks of 3 columns (4 chunks, the last of 1: core/loss_chunk.h).
  for (uint64_t budget : {uint64_t{0}, static_cast<uint64_t>(4 * 3 * d.N)}) {
    INFO("loss chunk bytes " << budget);
    auto loss = [&] {
      HeadStash st;
      st.targets = Tensor(*be, DType::I32, {d.N});
      be->copy_from_host(st.targets.data(), targets.data(), st.targets.bytes());
      head_forward(ctx, norm.data(), head.data(), x.data(), vs, budget, st);
      return be->sum(st.losses.f32(), d.N) / static_cast<double>(d.N) * 3.0;  // loss_scale 3
    };
    HeadStash st;
    st.targets = Tensor(*be, DType::I32, {d.N});
    be->copy_from_host(st.targets.data(), targets.data(), st.targets.bytes());
    head_forward(ctx, norm.data(), head.data(), x.data(), vs, budget, st);
    CHECK(st.columns == (budget == 0 ? V : 3));
    std::vector<float> dnorm(d.C, 0.0f), dhead(V * d.C, 0.0f), dx(d.N * d.C);
    head_backward(ctx, norm.data(), head.data(), dnorm.data(), dhead.data(), x.data(), vs, 3.0f, st,
                  dx.data());
    CHECK(fd_error(x, dx, loss, 64, 1e-2f) < 2e-3);
    CHECK(fd_error(norm, dnorm, loss, 8, 1e-2f) < 2e-3);
    CHECK(fd_error(head, dhead, loss, 80, 1e-2f) < 2e-3);
  }

  // Embedding: linear in the table, so the gradient is exact: dot(out, probe) per row.
  auto table = randn(V * d.C, 95);
  const auto probe = randn(d.N * d.C, 96);
  std::vector<float> out(d.N * d.C), dtable(V * d.C, 0.0f);
  auto emb_loss = [&] {
    embedding_forward(ctx, table.data(), targets.data(), vs, out.data());
    return dot(out, probe);
  };
  embedding_backward(ctx, dtable.data(), probe.data(), targets.data(), vs);
  CHECK(fd_error(table, dtable, emb_loss, 80, 1e-2f) < 1e-4);
}
