// CUDA backend kernels against the CPU backend on the same random inputs, forward and backward:
// elementwise ops, reductions, GEMM (every transpose, fp32 and bf16/tf32 modes), embedding,
// RMSNorm, rotary, SwiGLU, cross-entropy pieces, AdamW, memory accounting. Skipped without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <optional>

#include "test_cuda_util.h"

using namespace meshplan::exec;
using namespace cuda_test;
using exec_test::randn;
using exec_test::rand_tokens;
using exec_test::rel_error;

TEST_CASE("cuda elementwise ops match the CPU", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  const int64_t n = 100003;  // not a multiple of any block size
  const auto a = randn(n, 1), b = randn(n, 2);
  Tensor ga = upload(*gpu, a), gb = upload(*gpu, b), gout(*gpu, DType::F32, {n});
  Tensor ca = upload(*cpu, a), cb = upload(*cpu, b), cout(*cpu, DType::F32, {n});
  for (Backend* be : {gpu.get(), cpu.get()}) {
    const bool g = be == gpu.get();
    float* x = g ? ga.f32() : ca.f32();
    const float* y = g ? gb.f32() : cb.f32();
    float* o = g ? gout.f32() : cout.f32();
    be->add(o, x, y, n);
    be->axpy(o, -0.5f, y, n);
    be->scale(o, 3.0f, n);
    be->fill(x, 0.25f, 17);
  }
  // nvcc may fuse y + a x into one FMA (one rounding instead of two): not bit-identical.
  CHECK(rel_error(download(*gpu, gout), download(*cpu, cout)) < 1e-6);
  CHECK(identical(download(*gpu, ga), download(*cpu, ca)));  // fill and untouched values
}

TEST_CASE("cuda sums are double precision and deterministic", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  for (int64_t n : {int64_t{1}, int64_t{255}, int64_t{1000003}}) {
    const auto x = randn(n, 3 + n);
    Tensor g = upload(*gpu, x), c = upload(*cpu, x);
    const double s1 = gpu->sum_squares(g.f32(), n), s2 = gpu->sum_squares(g.f32(), n);
    CHECK(s1 == s2);  // the same tree every call
    CHECK(s1 == Approx(cpu->sum_squares(c.f32(), n)).epsilon(1e-12));
    CHECK(gpu->sum(g.f32(), n) == Approx(cpu->sum(c.f32(), n)).epsilon(1e-9).margin(1e-9));
  }
  CHECK(gpu->sum(nullptr, 0) == 0.0);
}

namespace {
// |C_gpu - C_ref| <= bound * sum_k |op(A)_ik op(B)_kj| + 1e-6 |C_ref| elementwise (bf16 / tf32
// rounding of the inputs: about 2 u_in of each product).
double gemm_violation(const std::vector<float>& got, const std::vector<float>& ref,
                      const std::vector<float>& A, const std::vector<float>& B, bool ta, bool tb,
                      int64_t M, int64_t N, int64_t K, double bound) {
  double worst = 0;
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double abs_sum = 0;
      for (int64_t p = 0; p < K; ++p) {
        const float a = ta ? A[p * M + i] : A[i * K + p];
        const float b = tb ? B[j * K + p] : B[p * N + j];
        abs_sum += std::fabs(static_cast<double>(a) * b);
      }
      const double err = std::fabs(static_cast<double>(got[i * N + j]) - ref[i * N + j]);
      worst = std::max(worst, err / (bound * abs_sum + 1e-6 * std::fabs(ref[i * N + j]) + 1e-30));
    }
  }
  return worst;  // <= 1 passes
}

struct GemmCase {
  bool ta, tb;
  int64_t M, N, K;
  float alpha, beta;
};

void check_gemm(GemmPrecision prec, double bound, int offset_floats) {
  auto gpu = cuda_backend(prec);
  auto cpu = cpu_reference();
  for (GemmCase c : {GemmCase{false, false, 33, 65, 17, 1.0f, 0.0f}, GemmCase{false, true, 64, 48, 96, 1.0f, 1.0f},
                     GemmCase{true, false, 7, 129, 31, 0.5f, 0.0f}, GemmCase{true, true, 128, 64, 64, -1.0f, 2.0f},
                     GemmCase{false, true, 1, 300, 257, 1.0f, 0.0f}}) {
    INFO("ta=" << c.ta << " tb=" << c.tb << " M=" << c.M << " N=" << c.N << " K=" << c.K << " precision "
               << to_string(prec) << " offset " << offset_floats);
    const auto A = randn(c.M * c.K, 11), B = randn(c.K * c.N, 12), C0 = randn(c.M * c.N, 13);
    // Offsets into larger buffers: the model passes pointers into flat parameter buffers.
    auto padded = [&](const std::vector<float>& v) {
      std::vector<float> p(offset_floats, 0.0f);
      p.insert(p.end(), v.begin(), v.end());
      return p;
    };
    Tensor gA = upload(*gpu, padded(A)), gB = upload(*gpu, padded(B)), gC = upload(*gpu, padded(C0));
    Tensor cA = upload(*cpu, A), cB = upload(*cpu, B), cC = upload(*cpu, C0);
    gpu->gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, gA.f32() + offset_floats, gB.f32() + offset_floats, c.beta,
              gC.f32() + offset_floats);
    cpu->gemm(c.ta, c.tb, c.M, c.N, c.K, c.alpha, cA.f32(), cB.f32(), c.beta, cC.f32());
    const auto got = download(*gpu, gC.f32() + offset_floats, c.M * c.N);
    const auto ref = download(*cpu, cC);
    std::vector<float> As = A;
    for (float& a : As) a *= std::fabs(c.alpha);
    CHECK(gemm_violation(got, ref, As, B, c.ta, c.tb, c.M, c.N, c.K, bound) <= 1.0);
  }
}
}  // namespace

TEST_CASE("cuda GEMM fp32 matches the CPU for every transpose", "[cuda][kernels][gemm]") {
  // fp32 accumulation over K <= 257 terms: far below 1e-5 of sum |a b| (worst case K u = 1.5e-5).
  check_gemm(GemmPrecision::Fp32, 1e-5, 0);
  check_gemm(GemmPrecision::Fp32, 1e-5, 1);  // 4-byte aligned operands
}

TEST_CASE("cuda GEMM bf16 (fast and copy) is within bf16 input rounding", "[cuda][kernels][gemm]") {
  // bf16 has 8 significant bits: each input rounds by <= 2^-9, a product by <= ~2^-8.
  check_gemm(GemmPrecision::Bf16, std::ldexp(1.0, -7), 0);
  check_gemm(GemmPrecision::Bf16Copy, std::ldexp(1.0, -7), 0);
  check_gemm(GemmPrecision::Bf16, std::ldexp(1.0, -7), 3);
}

TEST_CASE("cuda GEMM operand-reuse scope gives the same bits and frees its copies", "[cuda][kernels][gemm]") {
  // The model's q/k/v pattern: one activation A (N, C) against three weights, then the dW pattern
  // (A as the transposed-in B). Inside a bf16-copy scope A is copied once; the products must equal
  // the unscoped ones bit for bit, and the kept copies go when the scope ends.
  auto gpu = cuda_backend(GemmPrecision::Bf16Copy);
  const int64_t N = 96, C = 64, Q = 48;
  const auto A = randn(N * C, 41), W1 = randn(Q * C, 42), W2 = randn(Q * C, 43), D = randn(N * Q, 44);
  Tensor gA = upload(*gpu, A), g1 = upload(*gpu, W1), g2 = upload(*gpu, W2), gD = upload(*gpu, D);
  auto run = [&](bool scoped) {
    Tensor o1(*gpu, DType::F32, {N * Q}), o2(*gpu, DType::F32, {N * Q}), dw(*gpu, DType::F32, {Q * C});
    gpu->fill(dw.f32(), 0.0f, Q * C);
    const uint64_t before = gpu->memory().held_bytes();
    {
      std::optional<GemmOperandReuse> reuse;
      if (scoped) reuse.emplace(*gpu);
      gpu->gemm(false, true, N, Q, C, 1.0f, gA.f32(), g1.f32(), 0.0f, o1.f32());
      gpu->gemm(false, true, N, Q, C, 1.0f, gA.f32(), g2.f32(), 0.0f, o2.f32());
      gpu->gemm(true, false, Q, C, N, 1.0f, gD.f32(), gA.f32(), 1.0f, dw.f32());
      // Kept: A, W1, W2 and D in bf16 while the scope is open; nothing once it closes.
      if (scoped) CHECK(gpu->memory().held_bytes() - before == 2 * static_cast<uint64_t>(N * C + 2 * Q * C + N * Q));
    }
    CHECK(gpu->memory().held_bytes() == before);
    std::vector<float> all = download(*gpu, o1);
    for (const Tensor* t : {&o2, &dw}) {
      const auto v = download(*gpu, *t);
      all.insert(all.end(), v.begin(), v.end());
    }
    return all;
  };
  const auto plain = run(false), scoped = run(true);
  CHECK(identical(plain, scoped));
}

TEST_CASE("cuda bf16 storage rounds like the CPU and a bf16 GEMM input reads like its fp32 source",
          "[cuda][kernels][gemm][bf16]") {
  // The model keeps h1, h2 and act as bf16 under bf16-copy (executor/model/gemm_stash.h): to_bf16
  // must round exactly as the CPU emulation does, from_bf16 must be exact, and a GEMM on the bf16
  // tensor must give what the same GEMM gives on the fp32 source it was rounded from.
  auto gpu = cuda_backend(GemmPrecision::Bf16Copy);
  auto cpu = meshplan::exec::make_cpu_backend();
  REQUIRE(gpu->keeps_bf16_gemm_stash());
  const int64_t N = 96, C = 64, Q = 48;
  const auto A = randn(N * C, 51), W = randn(Q * C, 52);
  std::vector<float> round[2];
  Backend* bes[2] = {gpu.get(), cpu.get()};
  for (int i = 0; i < 2; ++i) {
    Tensor a = upload(*bes[i], A), a16(*bes[i], DType::BF16, {N * C}), back(*bes[i], DType::F32, {N * C});
    bes[i]->to_bf16(a16.data(), a.f32(), N * C);
    bes[i]->from_bf16(back.f32(), a16.data(), N * C);
    round[i] = download(*bes[i], back);
  }
  CHECK(identical(round[0], round[1]));
  Tensor a = upload(*gpu, A), w = upload(*gpu, W), a16(*gpu, DType::BF16, {N * C});
  gpu->to_bf16(a16.data(), a.f32(), N * C);
  Tensor from_f32(*gpu, DType::F32, {N * Q}), from_bf16(*gpu, DType::F32, {N * Q});
  gpu->gemm(false, true, N, Q, C, 1.0f, a.f32(), w.f32(), 0.0f, from_f32.f32());
  const uint64_t before = gpu->memory().held_bytes();
  gpu->gemm_typed(false, true, N, Q, C, 1.0f, meshplan::exec::GemmOperand::of(a16),
                  meshplan::exec::GemmOperand::f32(w.f32()), 0.0f, from_bf16.f32());
  CHECK(gpu->memory().held_bytes() == before);  // the transient copy of W is gone, none of a16 made
  CHECK(exec_test::rel_error(download(*gpu, from_bf16), download(*gpu, from_f32)) < 1e-6);
}

TEST_CASE("cuda kernels with a bf16 output give to_bf16 of their fp32 output bit for bit",
          "[cuda][kernels][bf16]") {
  // rmsnorm_forward_bf16, rope_forward_bf16 and swiglu_forward_bf16 write the bf16 stash in one pass;
  // each must equal its fp32 kernel followed by to_bf16 (same arithmetic, rounded on store).
  auto gpu = cuda_backend(GemmPrecision::Bf16Copy);
  const int64_t N = 70, C = 300, B = 2, T = 37, H = 4, D = 64, n = 100003;
  const auto x = randn(N * C, 61), w = randn(C, 62, 0.5f), r = randn(B * T * H * D, 63);
  const auto g = randn(n, 64, 2.0f), u = randn(n, 65);
  auto bits = [&](const Tensor& b16) {
    Tensor wide(*gpu, DType::F32, {b16.numel()});
    gpu->from_bf16(wide.f32(), b16.data(), b16.numel());
    return download(*gpu, wide);
  };
  auto narrowed = [&](const float* p, int64_t count) {
    Tensor b16(*gpu, DType::BF16, {count});
    gpu->to_bf16(b16.data(), p, count);
    return bits(b16);
  };
  Tensor tx = upload(*gpu, x), tw = upload(*gpu, w), tr = upload(*gpu, r), tg = upload(*gpu, g), tu = upload(*gpu, u);
  Tensor o32(*gpu, DType::F32, {N * C}), s32(*gpu, DType::F32, {N}), o16(*gpu, DType::BF16, {N * C});
  Tensor s16(*gpu, DType::F32, {N});
  gpu->rmsnorm_forward(o32.f32(), s32.f32(), tx.f32(), tw.f32(), N, C, 1e-5f);
  gpu->rmsnorm_forward_bf16(o16.data(), s16.f32(), tx.f32(), tw.f32(), N, C, 1e-5f);
  CHECK(identical(bits(o16), narrowed(o32.f32(), N * C)));
  CHECK(identical(download(*gpu, s16), download(*gpu, s32)));
  Tensor r16(*gpu, DType::BF16, {B * T * H * D});
  gpu->rope_forward_bf16(r16.data(), tr.f32(), B, T, H, D, 10000.0f);
  CHECK(identical(download(*gpu, tr), r));  // x unchanged
  gpu->rope_forward(tr.f32(), B, T, H, D, 10000.0f);
  CHECK(identical(bits(r16), narrowed(tr.f32(), B * T * H * D)));
  Tensor a32(*gpu, DType::F32, {n}), a16(*gpu, DType::BF16, {n});
  gpu->swiglu_forward(a32.f32(), tg.f32(), tu.f32(), n);
  gpu->swiglu_forward_bf16(a16.data(), tg.f32(), tu.f32(), n);
  CHECK(identical(bits(a16), narrowed(a32.f32(), n)));
}

TEST_CASE("cuda GEMM tf32 is within tf32 input rounding", "[cuda][kernels][gemm]") {
  check_gemm(GemmPrecision::Tf32, std::ldexp(1.0, -9), 0);
}

TEST_CASE("cuda GEMM with K = 0 scales C by beta", "[cuda][kernels][gemm]") {
  auto gpu = cuda_backend();
  Tensor c = upload(*gpu, std::vector<float>(12, 2.0f));
  gpu->gemm(false, false, 3, 4, 0, 1.0f, nullptr, nullptr, 0.5f, c.f32());
  CHECK(download(*gpu, c) == std::vector<float>(12, 1.0f));
  gpu->gemm(false, false, 3, 4, 0, 1.0f, nullptr, nullptr, 0.0f, c.f32());
  CHECK(download(*gpu, c) == std::vector<float>(12, 0.0f));
}

TEST_CASE("cuda embedding forward and backward match the CPU bit for bit", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  // (V, shard [begin, begin + Vl), N tokens, C): repeated tokens and tokens of other shards; the
  // second case has C over one block of channels and runs of hundreds of equal tokens (V = 7).
  struct Case { int64_t V, Vl, begin, N, C; };
  for (const Case k : {Case{50, 20, 20, 300, 37}, Case{7, 7, 0, 5000, 300}, Case{32000, 16000, 16000, 4099, 64}}) {
    INFO("V=" << k.V << " N=" << k.N << " C=" << k.C);
    const auto table = randn(k.Vl * k.C, 21), dout = randn(k.N * k.C, 22);
    const auto tokens = rand_tokens(k.N, k.V, 23);
    const auto grad0 = randn(k.Vl * k.C, 24);
    Tensor gt = upload(*gpu, table), gtok = upload(*gpu, tokens), gdo = upload(*gpu, dout), gg = upload(*gpu, grad0);
    Tensor ct = upload(*cpu, table), ctok = upload(*cpu, tokens), cdo = upload(*cpu, dout), cg = upload(*cpu, grad0);
    Tensor go(*gpu, DType::F32, {k.N * k.C}), co(*cpu, DType::F32, {k.N * k.C});
    gpu->embedding_forward(go.f32(), gtok.i32(), gt.f32(), k.begin, k.Vl, k.N, k.C);
    cpu->embedding_forward(co.f32(), ctok.i32(), ct.f32(), k.begin, k.Vl, k.N, k.C);
    CHECK(identical(download(*gpu, go), download(*cpu, co)));
    gpu->embedding_backward(gg.f32(), gdo.f32(), gtok.i32(), k.begin, k.Vl, k.N, k.C);
    cpu->embedding_backward(cg.f32(), cdo.f32(), ctok.i32(), k.begin, k.Vl, k.N, k.C);
    const auto got = download(*gpu, gg);
    CHECK(identical(got, download(*cpu, cg)));  // same values added in the same order
    CHECK_FALSE(identical(got, grad0));          // and something was added
  }
}

TEST_CASE("cuda RMSNorm forward and backward match the CPU", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  for (auto [N, C] : {std::pair<int64_t, int64_t>{5, 7}, {300, 96}, {129, 1030}}) {
    INFO("N=" << N << " C=" << C);
    const auto x = randn(N * C, 31), w = randn(C, 32), dout = randn(N * C, 33);
    const auto dx0 = randn(N * C, 34), dw0 = randn(C, 35);
    Tensor gx = upload(*gpu, x), gw = upload(*gpu, w), gd = upload(*gpu, dout), gdx = upload(*gpu, dx0), gdw = upload(*gpu, dw0);
    Tensor cx = upload(*cpu, x), cw = upload(*cpu, w), cd = upload(*cpu, dout), cdx = upload(*cpu, dx0), cdw = upload(*cpu, dw0);
    Tensor go(*gpu, DType::F32, {N * C}), gr(*gpu, DType::F32, {N}), co(*cpu, DType::F32, {N * C}), cr(*cpu, DType::F32, {N});
    gpu->rmsnorm_forward(go.f32(), gr.f32(), gx.f32(), gw.f32(), N, C, 1e-5f);
    cpu->rmsnorm_forward(co.f32(), cr.f32(), cx.f32(), cw.f32(), N, C, 1e-5f);
    CHECK(rel_error(download(*gpu, go), download(*cpu, co)) < 1e-6);
    CHECK(rel_error(download(*gpu, gr), download(*cpu, cr)) < 1e-6);
    gpu->rmsnorm_backward(gdx.f32(), gdw.f32(), gd.f32(), gx.f32(), gw.f32(), gr.f32(), N, C);
    cpu->rmsnorm_backward(cdx.f32(), cdw.f32(), cd.f32(), cx.f32(), cw.f32(), cr.f32(), N, C);
    CHECK(rel_error(download(*gpu, gdx), download(*cpu, cdx)) < 1e-5);
    CHECK(rel_error(download(*gpu, gdw), download(*cpu, cdw)) < 1e-5);  // accumulated, chunked order
  }
}

TEST_CASE("cuda rotary forward and backward match the CPU and invert each other", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  const int64_t B = 2, T = 70, H = 3, D = 64;
  const auto x = randn(B * T * H * D, 41, 3.0f);
  Tensor g = upload(*gpu, x), c = upload(*cpu, x);
  gpu->rope_forward(g.f32(), B, T, H, D, 10000.0f);
  cpu->rope_forward(c.f32(), B, T, H, D, 10000.0f);
  CHECK(rel_error(download(*gpu, g), download(*cpu, c)) < 1e-6);
  gpu->rope_backward(g.f32(), B, T, H, D, 10000.0f);
  cpu->rope_backward(c.f32(), B, T, H, D, 10000.0f);
  CHECK(rel_error(download(*gpu, g), download(*cpu, c)) < 1e-6);
  CHECK(rel_error(download(*gpu, g), x) < 1e-5);
}

TEST_CASE("cuda SwiGLU forward and backward match the CPU", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  const int64_t n = 77777;
  const auto gate = randn(n, 51, 4.0f), up = randn(n, 52), dout = randn(n, 53);
  Tensor gg = upload(*gpu, gate), gu = upload(*gpu, up), gd = upload(*gpu, dout);
  Tensor cg = upload(*cpu, gate), cu = upload(*cpu, up), cd = upload(*cpu, dout);
  Tensor go(*gpu, DType::F32, {n}), gdg(*gpu, DType::F32, {n}), gdu(*gpu, DType::F32, {n});
  Tensor co(*cpu, DType::F32, {n}), cdg(*cpu, DType::F32, {n}), cdu(*cpu, DType::F32, {n});
  gpu->swiglu_forward(go.f32(), gg.f32(), gu.f32(), n);
  cpu->swiglu_forward(co.f32(), cg.f32(), cu.f32(), n);
  CHECK(rel_error(download(*gpu, go), download(*cpu, co)) < 1e-6);
  gpu->swiglu_backward(gdg.f32(), gdu.f32(), gd.f32(), gg.f32(), gu.f32(), n);
  cpu->swiglu_backward(cdg.f32(), cdu.f32(), cd.f32(), cg.f32(), cu.f32(), n);
  CHECK(rel_error(download(*gpu, gdg), download(*cpu, cdg)) < 1e-6);
  CHECK(rel_error(download(*gpu, gdu), download(*cpu, cdu)) < 1e-6);
}

TEST_CASE("cuda vocab-parallel cross-entropy pieces match the CPU", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  const int64_t N = 65, Vl = 1001, begin = 1001;  // the second of several vocab shards
  const auto logits = randn(N * Vl, 61, 3.0f);
  const auto targets = rand_tokens(N, 3 * Vl, 62);  // some in this shard, most not
  Tensor gl = upload(*gpu, logits), gt = upload(*gpu, targets), cl = upload(*cpu, logits), ct = upload(*cpu, targets);
  auto run = [&](Backend& be, Tensor& l, Tensor& t) {
    Tensor mx(be, DType::F32, {N}), se(be, DType::F32, {N}), tl(be, DType::F32, {N}), loss(be, DType::F32, {N});
    be.ce_row_max(mx.f32(), l.f32(), N, Vl);
    be.ce_row_sumexp(se.f32(), l.f32(), mx.f32(), N, Vl);
    be.ce_target_logit(tl.f32(), l.f32(), t.i32(), begin, N, Vl);
    be.ce_loss(loss.f32(), mx.f32(), se.f32(), tl.f32(), N);
    be.ce_backward(l.f32(), l.f32(), mx.f32(), se.f32(), t.i32(), begin, 0.25f, N, Vl);  // in place
    std::vector<std::vector<float>> out;
    for (Tensor* x : {&mx, &se, &tl, &loss, &l}) out.push_back(download(be, *x));
    return out;
  };
  const auto g = run(*gpu, gl, gt), c = run(*cpu, cl, ct);
  CHECK(identical(g[0], c[0]));             // max is exact
  CHECK(rel_error(g[1], c[1]) < 1e-6);      // sum-exp (double accumulation on both)
  CHECK(identical(g[2], c[2]));             // a copied logit or 0
  CHECK(rel_error(g[3], c[3]) < 1e-6);
  CHECK(rel_error(g[4], c[4]) < 1e-6);      // dlogits
}

TEST_CASE("cuda chunk merge of the loss statistics matches the CPU", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  const int64_t N = 1031;
  const auto m0 = randn(N, 63, 3.0f), m1 = randn(N, 64, 3.0f);
  auto s0 = randn(N, 65), s1 = randn(N, 66);
  for (float& x : s0) x = 1.0f + x * x;
  for (float& x : s1) x = 1.0f + x * x;
  auto run = [&](Backend& be) {
    Tensor m = upload(be, m0), s = upload(be, s0), cm = upload(be, m1), cs = upload(be, s1);
    be.ce_merge_stats(m.f32(), s.f32(), cm.f32(), cs.f32(), N);
    // A fresh start (max -inf, sum 0) merged with a chunk takes the chunk as it is.
    Tensor fm(be, DType::F32, {N}), fs(be, DType::F32, {N});
    be.fill(fm.f32(), -INFINITY, N);
    be.fill(fs.f32(), 0.0f, N);
    be.ce_merge_stats(fm.f32(), fs.f32(), cm.f32(), cs.f32(), N);
    std::vector<std::vector<float>> out;
    for (Tensor* x : {&m, &s, &fm, &fs}) out.push_back(download(be, *x));
    return out;
  };
  const auto g = run(*gpu), c = run(*cpu);
  CHECK(identical(g[0], c[0]));         // the max is exact
  CHECK(rel_error(g[1], c[1]) < 1e-6);  // expf on the GPU, std::exp on the CPU
  CHECK(identical(g[2], m1));
  CHECK(identical(g[3], s1));
}

TEST_CASE("cuda AdamW matches the CPU", "[cuda][kernels]") {
  auto gpu = cuda_backend();
  auto cpu = cpu_reference();
  const int64_t n = 4099;
  const auto p = randn(n, 71), g = randn(n, 72), m = randn(n, 73, 0.1f);
  auto v = randn(n, 74, 0.1f);
  for (float& x : v) x = x * x;
  AdamWStep s;
  s.lr = 1e-3f;
  s.weight_decay = 0.1f;
  s.bias_correction1 = 1 - std::pow(0.9f, 3.0f);
  s.bias_correction2 = 1 - std::pow(0.95f, 3.0f);
  Tensor gp = upload(*gpu, p), gg = upload(*gpu, g), gm = upload(*gpu, m), gv = upload(*gpu, v);
  Tensor cp = upload(*cpu, p), cg = upload(*cpu, g), cm = upload(*cpu, m), cv = upload(*cpu, v);
  gpu->adamw(gp.f32(), gg.f32(), gm.f32(), gv.f32(), n, s);
  cpu->adamw(cp.f32(), cg.f32(), cm.f32(), cv.f32(), n, s);
  CHECK(rel_error(download(*gpu, gp), download(*cpu, cp)) < 1e-6);
  CHECK(rel_error(download(*gpu, gm), download(*cpu, cm)) < 1e-6);
  CHECK(rel_error(download(*gpu, gv), download(*cpu, cv)) < 1e-6);
}

TEST_CASE("cuda memory: tracker counts tensors, the pool reuses blocks, the device peak is sampled", "[cuda][memory]") {
  auto gpu = cuda_backend();
  const uint64_t held0 = gpu->memory().held_bytes();
  {
    Tensor a(*gpu, DType::F32, {1 << 20});
    CHECK(gpu->memory().held_bytes() == held0 + (4u << 20));
  }
  CHECK(gpu->memory().held_bytes() == held0);
  const DeviceMemoryReport before = device_memory_report(*gpu);
  { Tensor again(*gpu, DType::F32, {1 << 20}); }  // served from the pool's cache
  const DeviceMemoryReport after = device_memory_report(*gpu);
  CHECK(after.is_device);
  CHECK(after.pool_peak_reserved_bytes == before.pool_peak_reserved_bytes);
  CHECK(after.pool_peak_in_use_bytes >= (4u << 20));
  CHECK(after.device_peak_used_bytes >= after.pool_peak_reserved_bytes);
  CHECK(after.device_total_bytes > after.device_peak_used_bytes);
  CHECK_FALSE(after.device_name.empty());
}
