// The selftest's checks: each kernel of Backend on small shapes (partial tiles, GQA, T = 1) on the
// device and the reference with the same inputs. Tolerances are relative to max |reference|:
// 1e-6 for copies and elementwise ops (fused multiply-add may round once instead of twice), 1e-9 for
// double-precision reductions, 1e-5 for fp32 kernels with transcendental functions or a different
// summation order, 1e-4 for attention (online softmax vs two-pass), options.gemm_tolerance for GEMMs.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "executor/selftest/selftest.h"
#include "executor/tensor.h"

namespace meshplan::exec {

namespace {

std::vector<float> randn(int64_t n, uint64_t seed, float scale = 1.0f) {
  std::mt19937_64 gen(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

std::vector<int32_t> tokens(int64_t n, int64_t vocab, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> dist(0, vocab - 1);
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int32_t& t : v) t = static_cast<int32_t>(dist(gen));
  return v;
}

/// The same host data on both backends; read back from either.
struct Twin {
  Backend& dev;
  Backend& ref;
  Tensor on(Backend& be, const std::vector<float>& host) {
    Tensor t(be, DType::F32, {static_cast<int64_t>(host.size())});
    be.copy_from_host(t.data(), host.data(), host.size() * sizeof(float));
    return t;
  }
  Tensor on(Backend& be, const std::vector<int32_t>& host) {
    Tensor t(be, DType::I32, {static_cast<int64_t>(host.size())});
    be.copy_from_host(t.data(), host.data(), host.size() * sizeof(int32_t));
    return t;
  }
  static std::vector<float> get(Backend& be, const float* p, int64_t n) {
    std::vector<float> out(static_cast<size_t>(n));
    be.copy_to_host(out.data(), p, static_cast<uint64_t>(n) * sizeof(float));
    return out;
  }
  static std::vector<float> get(Backend& be, const Tensor& t) { return get(be, static_cast<const float*>(t.data()), t.numel()); }
};

using Rows = std::vector<SelftestRow>;
using Check = std::function<Rows(Twin&)>;

std::string dims(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  std::string s;
  for (const auto& [k, v] : kv) s += (s.empty() ? "" : " ") + std::string(k) + "=" + std::to_string(v);
  return s;
}

Rows check_copies(Twin& t) {
  const int64_t n = 4099;
  const auto a = randn(n, 1);
  Rows rows;
  Tensor d1 = t.on(t.dev, a), d2(t.dev, DType::F32, {n});
  t.dev.copy(d2.data(), d1.data(), static_cast<uint64_t>(n) * 4);
  rows.push_back(compare_outputs("copy host->device->device->host", dims({{"n", n}}), Twin::get(t.dev, d2), a, 0));
  return rows;
}

Rows check_elementwise(Twin& t) {
  const int64_t n = 100003;  // not a multiple of any block size
  const auto a = randn(n, 2), b = randn(n, 3);
  std::vector<float> out[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor x = t.on(be, a), y = t.on(be, b), o(be, DType::F32, {n});
    be.add(o.f32(), x.f32(), y.f32(), n);
    be.axpy(o.f32(), -0.5f, y.f32(), n);
    be.scale(o.f32(), 3.0f, n);
    be.fill(o.f32(), 0.25f, 17);
    out[i] = Twin::get(be, o);
  }
  return {compare_outputs("add, axpy, scale, fill", dims({{"n", n}}), out[0], out[1], 1e-6)};
}

Rows check_reductions(Twin& t) {
  const int64_t n = 70001;
  const auto a = randn(n, 4);
  Tensor x = t.on(t.dev, a), y = t.on(t.ref, a);
  const std::vector<float> got{static_cast<float>(t.dev.sum_squares(x.f32(), n)), static_cast<float>(t.dev.sum(x.f32(), n))};
  const std::vector<float> want{static_cast<float>(t.ref.sum_squares(y.f32(), n)), static_cast<float>(t.ref.sum(y.f32(), n))};
  return {compare_outputs("sum_squares, sum (double)", dims({{"n", n}}), got, want, 1e-6)};
}

Rows check_gemm(Twin& t, double tol) {
  const int64_t M = 37, N = 48, K = 80;  // odd M: partial tiles
  Rows rows;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      const auto a = randn(M * K, 10 + ta), b = randn(K * N, 20 + tb), c = randn(M * N, 30);
      std::vector<float> out[2];
      Backend* bes[2] = {&t.dev, &t.ref};
      for (int i = 0; i < 2; ++i) {
        Tensor A = t.on(*bes[i], a), B = t.on(*bes[i], b), C = t.on(*bes[i], c);
        bes[i]->gemm(ta != 0, tb != 0, M, N, K, 0.75f, A.f32(), B.f32(), 0.5f, C.f32());
        out[i] = Twin::get(*bes[i], C);
      }
      const std::string name = std::string("gemm ") + (ta ? "T" : "N") + (tb ? "T" : "N") + " (beta 0.5)";
      rows.push_back(compare_outputs(name, dims({{"M", M}, {"N", N}, {"K", K}}), out[0], out[1], tol));
    }
  }
  return rows;
}

// bf16 storage: the round trip fp32 -> bf16 -> fp32 (round to nearest even, so both backends agree
// bit for bit), and a GEMM with a bf16 input (the GEMM-only activations the model keeps in 16 bits).
Rows check_bf16_storage(Twin& t, double tol) {
  const int64_t M = 37, N = 48, K = 80, n = M * K;
  const auto a = randn(n, 60), b = randn(K * N, 61), c = randn(M * N, 62);
  std::vector<float> round[2], out[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor A = t.on(be, a), A16(be, DType::BF16, {n}), back(be, DType::F32, {n});
    be.to_bf16(A16.data(), A.f32(), n);
    be.from_bf16(back.f32(), A16.data(), n);
    round[i] = Twin::get(be, back);
    Tensor B = t.on(be, b), C = t.on(be, c);
    be.gemm_typed(false, true, M, N, K, 1.0f, GemmOperand::of(A16), GemmOperand::f32(B.f32()), 0.5f, C.f32());
    out[i] = Twin::get(be, C);
  }
  return {compare_outputs("to_bf16, from_bf16 (round trip)", dims({{"n", n}}), round[0], round[1], 0),
          compare_outputs("gemm NT, bf16 A (beta 0.5)", dims({{"M", M}, {"N", N}, {"K", K}}), out[0], out[1], tol)};
}

// The kernels that write the bf16 stash directly: RMSNorm, rotary (out of place) and SwiGLU with a
// bf16 output, widened here to compare. Where the two fp32 values straddle a rounding boundary the
// bf16 results differ by one step: 2^-7 relative.
Rows check_bf16_outputs(Twin& t) {
  const int64_t N = 33, C = 200, B = 2, T = 9, H = 3, D = 16, n = 10007;
  const auto x = randn(N * C, 90), w = randn(C, 91, 0.5f), r = randn(B * T * H * D, 92);
  const auto g = randn(n, 93, 2.0f), u = randn(n, 94);
  std::vector<float> norm[2], rstd[2], rope[2], act[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  auto widened = [](Backend& be, const Tensor& b16) {
    Tensor wide(be, DType::F32, {b16.numel()});
    be.from_bf16(wide.f32(), b16.data(), b16.numel());
    return Twin::get(be, wide);
  };
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor tx = t.on(be, x), tw = t.on(be, w), tr = t.on(be, r), tg = t.on(be, g), tu = t.on(be, u);
    Tensor o(be, DType::BF16, {N * C}), s(be, DType::F32, {N}), ro(be, DType::BF16, {B * T * H * D});
    Tensor a(be, DType::BF16, {n});
    be.rmsnorm_forward_bf16(o.data(), s.f32(), tx.f32(), tw.f32(), N, C, 1e-5f);
    be.rope_forward_bf16(ro.data(), tr.f32(), B, T, H, D, 10000.0f);
    be.swiglu_forward_bf16(a.data(), tg.f32(), tu.f32(), n);
    norm[i] = widened(be, o);
    rstd[i] = Twin::get(be, s);
    rope[i] = widened(be, ro);
    act[i] = widened(be, a);
  }
  const double step = 1.0 / 128.0;
  return {compare_outputs("rmsnorm forward, bf16 out", dims({{"N", N}, {"C", C}}), norm[0], norm[1], step),
          compare_outputs("rmsnorm forward rstd (bf16 out)", dims({{"N", N}}), rstd[0], rstd[1], 1e-5),
          compare_outputs("rope forward, bf16 out", dims({{"B", B}, {"T", T}, {"H", H}, {"D", D}}), rope[0], rope[1],
                          step),
          compare_outputs("swiglu forward, bf16 out", dims({{"n", n}}), act[0], act[1], step)};
}

Rows check_embedding(Twin& t) {
  const int64_t V = 50, C = 24, N = 67, vocab_begin = 10;
  const auto table = randn(V * C, 40), dout = randn(N * C, 41), dtable0 = randn(V * C, 42);
  const auto tok = tokens(N, 70, 43);  // some outside [10, 60): zero rows / no scatter
  std::vector<float> fwd[2], bwd[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor tt = t.on(be, table), tk = t.on(be, tok), o(be, DType::F32, {N * C}), dt = t.on(be, dtable0), d = t.on(be, dout);
    be.embedding_forward(o.f32(), tk.i32(), tt.f32(), vocab_begin, V, N, C);
    be.embedding_backward(dt.f32(), d.f32(), tk.i32(), vocab_begin, V, N, C);
    fwd[i] = Twin::get(be, o);
    bwd[i] = Twin::get(be, dt);
  }
  const std::string s = dims({{"V", V}, {"C", C}, {"N", N}});
  return {compare_outputs("embedding forward", s, fwd[0], fwd[1], 0),
          compare_outputs("embedding backward (scatter-add)", s, bwd[0], bwd[1], 1e-5)};
}

Rows check_rmsnorm(Twin& t) {
  const int64_t N = 33, C = 200;
  const auto x = randn(N * C, 50), w = randn(C, 51, 0.5f), dout = randn(N * C, 52), dx0 = randn(N * C, 53);
  std::vector<float> out[2], rstd[2], dx[2], dw[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor tx = t.on(be, x), tw = t.on(be, w), o(be, DType::F32, {N * C}), r(be, DType::F32, {N});
    Tensor td = t.on(be, dout), tdx = t.on(be, dx0), tdw(be, DType::F32, {C});
    be.fill(tdw.f32(), 0.0f, C);
    be.rmsnorm_forward(o.f32(), r.f32(), tx.f32(), tw.f32(), N, C, 1e-5f);
    be.rmsnorm_backward(tdx.f32(), tdw.f32(), td.f32(), tx.f32(), tw.f32(), r.f32(), N, C);
    out[i] = Twin::get(be, o);
    rstd[i] = Twin::get(be, r);
    dx[i] = Twin::get(be, tdx);
    dw[i] = Twin::get(be, tdw);
  }
  const std::string s = dims({{"N", N}, {"C", C}});
  return {compare_outputs("rmsnorm forward out", s, out[0], out[1], 1e-5), compare_outputs("rmsnorm forward rstd", s, rstd[0], rstd[1], 1e-5),
          compare_outputs("rmsnorm backward dx (+=)", s, dx[0], dx[1], 1e-5), compare_outputs("rmsnorm backward dw (+=)", s, dw[0], dw[1], 1e-5)};
}

Rows check_rope(Twin& t) {
  const int64_t B = 2, T = 19, H = 3, D = 16;
  const auto x = randn(B * T * H * D, 60);
  std::vector<float> fwd[2], bwd[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Tensor tx = t.on(*bes[i], x), tg = t.on(*bes[i], x);
    bes[i]->rope_forward(tx.f32(), B, T, H, D, 10000.0f);
    bes[i]->rope_backward(tg.f32(), B, T, H, D, 10000.0f);
    fwd[i] = Twin::get(*bes[i], tx);
    bwd[i] = Twin::get(*bes[i], tg);
  }
  const std::string s = dims({{"B", B}, {"T", T}, {"H", H}, {"D", D}});
  return {compare_outputs("rope forward", s, fwd[0], fwd[1], 1e-5), compare_outputs("rope backward", s, bwd[0], bwd[1], 1e-5)};
}

// Device (index 0) and reference (1) results of one attention forward and backward.
struct AttentionResults {
  std::vector<float> out[2], lse[2], dq[2], dk[2], dv[2];
};

// The five comparison rows of an attention check; names end with `tag`. Gradients: floor 1
// (unit-scale inputs give O(1) gradients; at T = 1 the exact dq, dk are 0).
Rows attention_rows(const AttentionResults& r, const AttentionDims& d, const std::string& tag, double out_tol,
                    const SelftestOptions& o) {
  const std::string s = dims({{"B", d.B}, {"T", d.T}, {"NH", d.NH}, {"NKV", d.NKV}, {"D", d.D}});
  return {compare_outputs("attention forward out" + tag, s, r.out[0], r.out[1], out_tol),
          compare_outputs("attention forward lse" + tag, s, r.lse[0], r.lse[1], o.attention_lse_tolerance),
          compare_outputs("attention backward dq" + tag, s, r.dq[0], r.dq[1], o.attention_grad_tolerance, 1.0),
          compare_outputs("attention backward dk" + tag, s, r.dk[0], r.dk[1], o.attention_grad_tolerance, 1.0),
          compare_outputs("attention backward dv" + tag, s, r.dv[0], r.dv[1], o.attention_grad_tolerance, 1.0)};
}

Rows check_attention(Twin& t, const AttentionDims& d, bool with_probs, const SelftestOptions& o) {
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  const auto q = randn(nq, 70, 1.5f), k = randn(nkv, 71, 1.5f), v = randn(nkv, 72), dout = randn(nq, 73);
  AttentionResults r;
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor tq = t.on(be, q), tk = t.on(be, k), tv = t.on(be, v), tdo = t.on(be, dout);
    Tensor o(be, DType::F32, {nq}), l(be, DType::F32, {d.B * d.NH * d.T});
    Tensor p(be, DType::F32, {with_probs ? d.B * d.NH * d.T * d.T : 0});
    Tensor gq(be, DType::F32, {nq}), gk(be, DType::F32, {nkv}), gv(be, DType::F32, {nkv});
    float* probs = with_probs ? p.f32() : nullptr;
    be.attention_forward(o.f32(), l.f32(), probs, tq.f32(), tk.f32(), tv.f32(), d);
    be.attention_backward(gq.f32(), gk.f32(), gv.f32(), tdo.f32(), tq.f32(), tk.f32(), tv.f32(), o.f32(), l.f32(), probs, d);
    r.out[i] = Twin::get(be, o);
    r.lse[i] = Twin::get(be, l);
    r.dq[i] = Twin::get(be, gq);
    r.dk[i] = Twin::get(be, gk);
    r.dv[i] = Twin::get(be, gv);
  }
  return attention_rows(r, d, with_probs ? " (kept probs)" : "", o.attention_tolerance, o);
}

// The bf16 entry points the model's bf16 attention stash calls (q, k, v and out in bf16): the same
// rounded inputs on both backends. The bf16 output may differ by one bf16 step where the two fp32
// results straddle a rounding boundary: at least 2^-7 relative.
Rows check_attention_bf16(Twin& t, const AttentionDims& d, const SelftestOptions& o) {
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  const auto q = randn(nq, 74, 1.5f), k = randn(nkv, 75, 1.5f), v = randn(nkv, 76), dout = randn(nq, 77);
  AttentionResults r;
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor tq = t.on(be, q), tk = t.on(be, k), tv = t.on(be, v), tdo = t.on(be, dout);
    Tensor q16(be, DType::BF16, {nq}), k16(be, DType::BF16, {nkv}), v16(be, DType::BF16, {nkv});
    be.to_bf16(q16.data(), tq.f32(), nq);
    be.to_bf16(k16.data(), tk.f32(), nkv);
    be.to_bf16(v16.data(), tv.f32(), nkv);
    Tensor o16(be, DType::BF16, {nq}), o32(be, DType::F32, {nq}), l(be, DType::F32, {d.B * d.NH * d.T});
    Tensor gq(be, DType::F32, {nq}), gk(be, DType::F32, {nkv}), gv(be, DType::F32, {nkv});
    be.attention_forward_bf16(o16.data(), l.f32(), nullptr, q16.data(), k16.data(), v16.data(), d);
    be.attention_backward_bf16(gq.f32(), gk.f32(), gv.f32(), tdo.f32(), q16.data(), k16.data(), v16.data(),
                               o16.data(), l.f32(), nullptr, d);
    be.from_bf16(o32.f32(), o16.data(), nq);
    r.out[i] = Twin::get(be, o32);
    r.lse[i] = Twin::get(be, l);
    r.dq[i] = Twin::get(be, gq);
    r.dk[i] = Twin::get(be, gk);
    r.dv[i] = Twin::get(be, gv);
  }
  return attention_rows(r, d, " (bf16 tensors)", std::max(o.attention_tolerance, 1.0 / 128.0), o);
}

Rows check_swiglu(Twin& t) {
  const int64_t n = 10007;
  const auto g = randn(n, 80, 2.0f), u = randn(n, 81), dout = randn(n, 82);
  std::vector<float> out[2], dg[2], du[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor tg = t.on(be, g), tu = t.on(be, u), td = t.on(be, dout);
    Tensor o(be, DType::F32, {n}), a(be, DType::F32, {n}), b(be, DType::F32, {n});
    be.swiglu_forward(o.f32(), tg.f32(), tu.f32(), n);
    be.swiglu_backward(a.f32(), b.f32(), td.f32(), tg.f32(), tu.f32(), n);
    out[i] = Twin::get(be, o);
    dg[i] = Twin::get(be, a);
    du[i] = Twin::get(be, b);
  }
  const std::string s = dims({{"n", n}});
  return {compare_outputs("swiglu forward", s, out[0], out[1], 1e-5), compare_outputs("swiglu backward dgate", s, dg[0], dg[1], 1e-5),
          compare_outputs("swiglu backward dup", s, du[0], du[1], 1e-5)};
}

Rows check_cross_entropy(Twin& t) {
  const int64_t N = 29, Vl = 300, vocab_begin = 100;
  const auto logits = randn(N * Vl, 90, 3.0f);
  const auto targets = tokens(N, 500, 91);  // some outside this shard [100, 400)
  // A second chunk of statistics, shifted so that some rows' maxima come from it, for the merge.
  auto chunk_max = randn(N, 92, 3.0f), chunk_sumexp = randn(N, 93);
  for (float& x : chunk_sumexp) x = 1.0f + x * x;
  std::vector<float> mx[2], se[2], tl[2], loss[2], dl[2], mm[2], ms[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Backend& be = *bes[i];
    Tensor lg = t.on(be, logits), tg = t.on(be, targets), cm = t.on(be, chunk_max), cs = t.on(be, chunk_sumexp);
    Tensor m(be, DType::F32, {N}), s(be, DType::F32, {N}), tt(be, DType::F32, {N}), l(be, DType::F32, {N}), d(be, DType::F32, {N * Vl});
    be.ce_row_max(m.f32(), lg.f32(), N, Vl);
    be.ce_row_sumexp(s.f32(), lg.f32(), m.f32(), N, Vl);
    be.ce_target_logit(tt.f32(), lg.f32(), tg.i32(), vocab_begin, N, Vl);
    be.ce_loss(l.f32(), m.f32(), s.f32(), tt.f32(), N);
    be.ce_backward(d.f32(), lg.f32(), m.f32(), s.f32(), tg.i32(), vocab_begin, 0.25f, N, Vl);
    mx[i] = Twin::get(be, m);
    se[i] = Twin::get(be, s);
    tl[i] = Twin::get(be, tt);
    loss[i] = Twin::get(be, l);
    dl[i] = Twin::get(be, d);
    be.ce_merge_stats(m.f32(), s.f32(), cm.f32(), cs.f32(), N);  // (m, s) folded with the second chunk
    mm[i] = Twin::get(be, m);
    ms[i] = Twin::get(be, s);
  }
  const std::string s = dims({{"N", N}, {"Vl", Vl}});
  return {compare_outputs("cross-entropy row max", s, mx[0], mx[1], 0), compare_outputs("cross-entropy row sum-exp", s, se[0], se[1], 1e-5),
          compare_outputs("cross-entropy target logit", s, tl[0], tl[1], 0), compare_outputs("cross-entropy loss", s, loss[0], loss[1], 1e-5),
          compare_outputs("cross-entropy backward", s, dl[0], dl[1], 1e-5),
          compare_outputs("cross-entropy chunk merge max", s, mm[0], mm[1], 0),
          compare_outputs("cross-entropy chunk merge sum-exp", s, ms[0], ms[1], 1e-5)};
}

Rows check_adamw(Twin& t) {
  const int64_t n = 5003;
  const auto p = randn(n, 100), g = randn(n, 101, 0.1f), m = randn(n, 102, 0.01f);
  auto v = randn(n, 103, 0.001f);
  for (float& x : v) x = x * x;
  AdamWStep s;
  s.lr = 1e-3f;
  s.weight_decay = 0.1f;
  s.bias_correction1 = 1 - 0.9f * 0.9f;
  s.bias_correction2 = 1 - 0.95f * 0.95f;
  std::vector<float> out[2];
  Backend* bes[2] = {&t.dev, &t.ref};
  for (int i = 0; i < 2; ++i) {
    Tensor tp = t.on(*bes[i], p), tg = t.on(*bes[i], g), tm = t.on(*bes[i], m), tv = t.on(*bes[i], v);
    bes[i]->adamw(tp.f32(), tg.f32(), tm.f32(), tv.f32(), n, s);
    out[i] = Twin::get(*bes[i], tp);
  }
  return {compare_outputs("adamw update", dims({{"n", n}}), out[0], out[1], 1e-5)};
}

}  // namespace

SelftestReport run_backend_selftest(Backend& device, Backend& reference, const SelftestOptions& options) {
  Twin twin{device, reference};
  std::vector<Check> checks{
      check_copies, check_elementwise, check_reductions,
      [&](Twin& t) { return check_gemm(t, options.gemm_tolerance); },
      [&](Twin& t) { return check_bf16_storage(t, options.gemm_tolerance); },
      check_embedding, check_rmsnorm, check_rope, check_bf16_outputs,
      [&](Twin& t) { return check_attention(t, AttentionDims{2, 37, 4, 2, 16}, false, options); },
      [&](Twin& t) { return check_attention(t, AttentionDims{1, 33, 2, 2, 128}, true, options); },
      [&](Twin& t) { return check_attention(t, AttentionDims{3, 1, 2, 1, 8}, false, options); },
      // A model-like shape (head dim 64, GQA 4:1, several 64-row tiles): cuDNN's main path.
      [&](Twin& t) { return check_attention(t, AttentionDims{2, 200, 8, 2, 64}, false, options); },
      [&](Twin& t) { return check_attention_bf16(t, AttentionDims{2, 200, 8, 2, 64}, options); },
      check_swiglu, check_cross_entropy, check_adamw};
  for (const auto& extra : options.extra) checks.push_back([&](Twin& t) { return extra(t.dev, t.ref); });
  SelftestReport report;
  for (const Check& check : checks) {
    Rows rows = check(twin);
    report.rows.insert(report.rows.end(), rows.begin(), rows.end());
    if (options.stop_at_first_failure && report.first_failure() != nullptr) break;
  }
  return report;
}

}  // namespace meshplan::exec
