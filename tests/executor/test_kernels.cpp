// CPU kernels: Eigen GEMM vs the triple loop, fast attention vs the scalar reference, and every
// backward kernel vs central finite differences of its forward.
#include <catch2/catch.hpp>

#include "exec_test_util.h"
#include "executor/backend.h"
#include "executor/cpu/reference.h"

using namespace meshplan::exec;
using namespace exec_test;

TEST_CASE("eigen gemm matches the triple loop for every transpose and beta", "[executor][kernels]") {
  const int64_t M = 13, N = 7, K = 19;
  for (int ta = 0; ta < 2; ++ta) {
    for (int tb = 0; tb < 2; ++tb) {
      for (float beta : {0.0f, 1.0f, 0.5f}) {
        const auto A = randn(M * K, 1), B = randn(K * N, 2), C0 = randn(M * N, 3);
        auto c_fast = C0, c_ref = C0;
        gemm_eigen(ta, tb, M, N, K, 0.7f, A.data(), B.data(), beta, c_fast.data());
        gemm_naive(ta, tb, M, N, K, 0.7f, A.data(), B.data(), beta, c_ref.data());
        INFO("trans_a=" << ta << " trans_b=" << tb << " beta=" << beta);
        CHECK(rel_error(c_fast, c_ref) < 1e-5);
      }
    }
  }
}

TEST_CASE("gemm with beta 0 ignores NaN in C", "[executor][kernels]") {
  auto be = make_cpu_backend();
  std::vector<float> a{1, 2}, b{3, 4}, c{NAN};
  be->gemm(false, false, 1, 1, 2, 1.0f, a.data(), b.data(), 0.0f, c.data());
  CHECK(c[0] == 11.0f);
}

namespace {
struct AttnCase {
  AttentionDims d;
  std::vector<float> q, k, v;
};
AttnCase attn_case(int64_t B, int64_t T, int64_t NH, int64_t NKV, int64_t D) {
  AttnCase c{{B, T, NH, NKV, D}, randn(B * T * NH * D, 11), randn(B * T * NKV * D, 12),
             randn(B * T * NKV * D, 13)};
  return c;
}
}  // namespace

TEST_CASE("fast attention matches the scalar reference, forward and backward", "[executor][kernels]") {
  for (auto c : {attn_case(2, 9, 4, 2, 8), attn_case(1, 16, 3, 1, 4), attn_case(2, 5, 2, 2, 6)}) {
    const AttentionDims& d = c.d;
    const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
    std::vector<float> out_f(nq), out_r(nq), lse_f(d.B * d.NH * d.T), lse_r(lse_f.size());
    std::vector<float> probs_f(d.B * d.NH * d.T * d.T), probs_r(probs_f.size());
    attention_forward_eigen(out_f.data(), lse_f.data(), probs_f.data(), c.q.data(), c.k.data(), c.v.data(), d);
    attention_forward_reference(out_r.data(), lse_r.data(), probs_r.data(), c.q.data(), c.k.data(), c.v.data(), d);
    CHECK(rel_error(out_f, out_r) < 1e-5);
    CHECK(rel_error(lse_f, lse_r) < 1e-5);
    CHECK(rel_error(probs_f, probs_r) < 1e-5);
    const auto dout = randn(nq, 14);
    std::vector<float> dq_r(nq), dk_r(nkv), dv_r(nkv);
    attention_backward_reference(dq_r.data(), dk_r.data(), dv_r.data(), dout.data(), c.q.data(), c.k.data(), c.v.data(), lse_r.data(), d);
    for (const float* probs : {static_cast<const float*>(probs_f.data()), static_cast<const float*>(nullptr)}) {
      std::vector<float> dq(nq), dk(nkv), dv(nkv);
      attention_backward_eigen(dq.data(), dk.data(), dv.data(), dout.data(), c.q.data(), c.k.data(), c.v.data(), lse_f.data(), probs, d);
      CHECK(rel_error(dq, dq_r) < 1e-5);
      CHECK(rel_error(dk, dk_r) < 1e-5);
      CHECK(rel_error(dv, dv_r) < 1e-5);
    }
  }
}

TEST_CASE("attention is causal: later keys do not change earlier outputs", "[executor][kernels]") {
  auto c = attn_case(1, 6, 2, 1, 4);
  const AttentionDims& d = c.d;
  std::vector<float> out1(d.T * d.NH * d.D), out2(out1.size()), lse(d.NH * d.T);
  attention_forward_eigen(out1.data(), lse.data(), nullptr, c.q.data(), c.k.data(), c.v.data(), d);
  for (int64_t i = 5 * d.NKV * d.D; i < 6 * d.NKV * d.D; ++i) c.k[i] += 3.0f, c.v[i] -= 2.0f;
  attention_forward_eigen(out2.data(), lse.data(), nullptr, c.q.data(), c.k.data(), c.v.data(), d);
  for (int64_t i = 0; i < 5 * d.NH * d.D; ++i) REQUIRE(out1[i] == out2[i]);
  CHECK(out1[5 * d.NH * d.D] != out2[5 * d.NH * d.D]);
}

TEST_CASE("attention backward matches finite differences", "[executor][kernels]") {
  auto c = attn_case(1, 5, 4, 2, 4);
  const AttentionDims& d = c.d;
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  const auto probe = randn(nq, 21);
  std::vector<float> out(nq), lse(d.NH * d.T);
  auto loss = [&] {
    attention_forward_reference(out.data(), lse.data(), nullptr, c.q.data(), c.k.data(), c.v.data(), d);
    return dot(out, probe);
  };
  loss();
  std::vector<float> dq(nq), dk(nkv), dv(nkv);
  attention_backward_eigen(dq.data(), dk.data(), dv.data(), probe.data(), c.q.data(), c.k.data(), c.v.data(), lse.data(), nullptr, d);
  CHECK(fd_error(c.q, dq, loss, 40) < 2e-3);
  CHECK(fd_error(c.k, dk, loss, 40) < 2e-3);
  CHECK(fd_error(c.v, dv, loss, 40) < 2e-3);
}

TEST_CASE("rmsnorm backward matches finite differences and accumulates", "[executor][kernels]") {
  auto be = make_cpu_backend();
  const int64_t N = 5, C = 12;
  auto x = randn(N * C, 31), w = randn(C, 32);
  const auto probe = randn(N * C, 33);
  std::vector<float> out(N * C), rstd(N);
  auto loss = [&] {
    be->rmsnorm_forward(out.data(), rstd.data(), x.data(), w.data(), N, C, 1e-5f);
    return dot(out, probe);
  };
  loss();
  std::vector<float> dx(N * C, 0.5f), dw(C, 0.25f);
  be->rmsnorm_backward(dx.data(), dw.data(), probe.data(), x.data(), w.data(), rstd.data(), N, C);
  for (float& g : dx) g -= 0.5f;  // accumulate semantics: subtract what was there
  for (float& g : dw) g -= 0.25f;
  CHECK(fd_error(x, dx, loss, 60) < 2e-3);
  CHECK(fd_error(w, dw, loss, 12) < 2e-3);
}

TEST_CASE("rotary backward is the transpose of forward and preserves norms", "[executor][kernels]") {
  auto be = make_cpu_backend();
  const int64_t B = 2, T = 7, H = 3, D = 8, n = B * T * H * D;
  auto x = randn(n, 41);
  const auto probe = randn(n, 42);
  auto rotated = x;
  be->rope_forward(rotated.data(), B, T, H, D, 10000.0f);
  CHECK(std::fabs(dot(rotated, rotated) - dot(x, x)) < 1e-3 * dot(x, x));
  for (int64_t i = 0; i < H * D; ++i) CHECK(rotated[i] == x[i]);  // position 0 unrotated
  auto back = probe;
  be->rope_backward(back.data(), B, T, H, D, 10000.0f);
  CHECK(std::fabs(dot(rotated, probe) - dot(x, back)) < 1e-4 * std::fabs(dot(x, back)) + 1e-4);
}

TEST_CASE("swiglu backward matches finite differences", "[executor][kernels]") {
  auto be = make_cpu_backend();
  const int64_t n = 50;
  auto gate = randn(n, 51, 2.0f), up = randn(n, 52);
  const auto probe = randn(n, 53);
  std::vector<float> out(n);
  auto loss = [&] {
    be->swiglu_forward(out.data(), gate.data(), up.data(), n);
    return dot(out, probe);
  };
  std::vector<float> dgate(n), dup(n);
  be->swiglu_backward(dgate.data(), dup.data(), probe.data(), gate.data(), up.data(), n);
  CHECK(fd_error(gate, dgate, loss, 50) < 2e-3);
  CHECK(fd_error(up, dup, loss, 50) < 2e-3);
}

TEST_CASE("cross-entropy pieces give log-softmax loss and its gradient", "[executor][kernels]") {
  auto be = make_cpu_backend();
  const int64_t N = 4, V = 11;
  auto logits = randn(N * V, 61, 3.0f);
  const auto targets = rand_tokens(N, V, 62);
  std::vector<float> mx(N), se(N), tl(N), losses(N);
  auto loss = [&] {
    be->ce_row_max(mx.data(), logits.data(), N, V);
    be->ce_row_sumexp(se.data(), logits.data(), mx.data(), N, V);
    be->ce_target_logit(tl.data(), logits.data(), targets.data(), 0, N, V);
    be->ce_loss(losses.data(), mx.data(), se.data(), tl.data(), N);
    double s = 0;
    for (float l : losses) s += l;
    return s;
  };
  loss();
  for (int64_t n = 0; n < N; ++n) {  // closed form
    double z = 0;
    for (int64_t j = 0; j < V; ++j) z += std::exp(static_cast<double>(logits[n * V + j]));
    CHECK(losses[n] == Approx(std::log(z) - logits[n * V + targets[n]]).epsilon(1e-5));
  }
  std::vector<float> dl(N * V);
  be->ce_backward(dl.data(), logits.data(), mx.data(), se.data(), targets.data(), 0, 1.0f, N, V);
  CHECK(fd_error(logits, dl, loss, 44) < 2e-3);
}

TEST_CASE("embedding lookup is masked to the vocabulary shard", "[executor][kernels]") {
  auto be = make_cpu_backend();
  const int64_t C = 3;
  const auto table = randn(4 * C, 71);  // rows 4..7 of an 8-token vocabulary
  const std::vector<int32_t> tokens{1, 5, 7, 4};
  std::vector<float> out(4 * C);
  be->embedding_forward(out.data(), tokens.data(), table.data(), 4, 4, 4, C);
  for (int64_t c = 0; c < C; ++c) {
    CHECK(out[c] == 0.0f);
    CHECK(out[C + c] == table[1 * C + c]);
    CHECK(out[2 * C + c] == table[3 * C + c]);
  }
  std::vector<float> dtable(4 * C, 0.0f), dout(4 * C, 1.0f);
  be->embedding_backward(dtable.data(), dout.data(), tokens.data(), 4, 4, 4, C);
  CHECK(dtable[0] == 1.0f);   // token 4
  CHECK(dtable[2 * C] == 0.0f);  // token 6 absent
}

TEST_CASE("memory tracker counts every tensor and keeps the high-water mark", "[executor][kernels]") {
  auto be = make_cpu_backend();
  const uint64_t before = be->memory().held_bytes();
  {
    Tensor a(*be, DType::F32, {10, 10});
    Tensor b(*be, DType::I32, {5});
    CHECK(be->memory().held_bytes() == before + 420);
    Tensor c = std::move(a);
    CHECK(be->memory().held_bytes() == before + 420);
  }
  CHECK(be->memory().held_bytes() == before);
  CHECK(be->memory().peak_bytes() >= before + 420);
  be->memory().reset_peak();
  CHECK(be->memory().peak_bytes() == before);
}
