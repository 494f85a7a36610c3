// cuDNN's fused SDPA path of the CUDA backend against the CPU's scalar reference (double
// accumulation): forward and backward at bf16 tolerances on model-like shapes (head dims 64 and 128,
// GQA 1:1 and 4:1, sequence lengths that are not tile multiples), the fallback to the fp32 kernels
// where cuDNN has no engine (T = 1, head dim 12), the deterministic option, and a whole model chunk.
// Skipped without a GPU; on a GPU build without cuDNN the cuDNN cases check that the reference ran.
#include <catch2/catch.hpp>

#include "executor/model/model_chunk.h"
#ifdef MESHPLAN_HAVE_CUDA
#include "executor/cuda/cuda_backend.h"
#endif
#include "test_cuda_util.h"

using namespace meshplan;
using namespace meshplan::exec;
using namespace cuda_test;
using exec_test::randn;
using exec_test::rel_error;
using exec_test::rel_error_floor;

namespace {

struct Outs {
  std::vector<float> out, lse, dq, dk, dv;
};

Outs run(Backend& be, const AttentionDims& d, uint64_t seed) {
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  Tensor tq = upload(be, randn(nq, seed, 1.5f)), tk = upload(be, randn(nkv, seed + 1, 1.5f));
  Tensor tv = upload(be, randn(nkv, seed + 2)), tdo = upload(be, randn(nq, seed + 3));
  Tensor out(be, DType::F32, {nq}), lse(be, DType::F32, {d.B * d.NH * d.T});
  Tensor dq(be, DType::F32, {nq}), dk(be, DType::F32, {nkv}), dv(be, DType::F32, {nkv});
  be.attention_forward(out.f32(), lse.f32(), nullptr, tq.f32(), tk.f32(), tv.f32(), d);
  be.attention_backward(dq.f32(), dk.f32(), dv.f32(), tdo.f32(), tq.f32(), tk.f32(), tv.f32(), out.f32(),
                        lse.f32(), nullptr, d);
  return Outs{download(be, out), download(be, lse), download(be, dq), download(be, dk), download(be, dv)};
}

// The same attention through the bf16 entry points (the model's bf16 attention stash): q, k, v
// rounded once by to_bf16, the output written in bf16 and widened here to compare.
Outs run_bf16(Backend& be, const AttentionDims& d, uint64_t seed) {
  const int64_t nq = d.B * d.T * d.NH * d.D, nkv = d.B * d.T * d.NKV * d.D;
  Tensor tq = upload(be, randn(nq, seed, 1.5f)), tk = upload(be, randn(nkv, seed + 1, 1.5f));
  Tensor tv = upload(be, randn(nkv, seed + 2)), tdo = upload(be, randn(nq, seed + 3));
  Tensor q16(be, DType::BF16, {nq}), k16(be, DType::BF16, {nkv}), v16(be, DType::BF16, {nkv});
  be.to_bf16(q16.data(), tq.f32(), nq);
  be.to_bf16(k16.data(), tk.f32(), nkv);
  be.to_bf16(v16.data(), tv.f32(), nkv);
  Tensor o16(be, DType::BF16, {nq}), out(be, DType::F32, {nq}), lse(be, DType::F32, {d.B * d.NH * d.T});
  Tensor dq(be, DType::F32, {nq}), dk(be, DType::F32, {nkv}), dv(be, DType::F32, {nkv});
  be.attention_forward_bf16(o16.data(), lse.f32(), nullptr, q16.data(), k16.data(), v16.data(), d);
  be.attention_backward_bf16(dq.f32(), dk.f32(), dv.f32(), tdo.f32(), q16.data(), k16.data(), v16.data(),
                             o16.data(), lse.f32(), nullptr, d);
  be.from_bf16(out.f32(), o16.data(), nq);
  return Outs{download(be, out), download(be, lse), download(be, dq), download(be, dk), download(be, dv)};
}

bool uses_cudnn(Backend& be, const AttentionDims& d) {
#ifdef MESHPLAN_HAVE_CUDA
  return dynamic_cast<CudaBackend&>(be).attention_uses_cudnn(d);
#else
  (void)be, (void)d;
  return false;
#endif
}

}  // namespace

TEST_CASE("cudnn attention matches the CPU reference within bf16 tolerances", "[cuda][attention][cudnn]") {
  auto gpu = cuda_backend(GemmPrecision::Fp32, CudaAttention::Cudnn);
  auto cpu = cpu_reference();
  // {B, T, NH, NKV, D}
  for (AttentionDims d : {AttentionDims{2, 200, 8, 2, 64}, AttentionDims{1, 256, 4, 4, 128},
                          AttentionDims{2, 77, 4, 1, 64}, AttentionDims{1, 1024, 2, 2, 64}}) {
    INFO("B=" << d.B << " T=" << d.T << " NH=" << d.NH << " NKV=" << d.NKV << " D=" << d.D);
    // A build with cuDNN must not fall back silently on the shapes the models use.
    CHECK(uses_cudnn(*gpu, d) == cudnn_attention_compiled());
    const Outs g = run(*gpu, d, 11), c = run(*cpu, d, 11);
    // bf16 q, k, v (2^-9 relative each) through a softmax: ~1e-2 of the largest output.
    CHECK(rel_error(g.out, c.out) < 2e-2);
    CHECK(rel_error(g.lse, c.lse) < 2e-2);
    CHECK(rel_error_floor(g.dq, c.dq, 1.0) < 5e-2);
    CHECK(rel_error_floor(g.dk, c.dk, 1.0) < 5e-2);
    CHECK(rel_error_floor(g.dv, c.dv, 1.0) < 5e-2);
    // ... and not bit-equal to an fp32 computation when cuDNN really ran.
    if (cudnn_attention_compiled()) CHECK(rel_error(g.out, c.out) > 1e-6);
  }
}

TEST_CASE("cudnn attention falls back to the fp32 kernels where cuDNN has no engine", "[cuda][attention][cudnn]") {
  auto gpu = cuda_backend(GemmPrecision::Fp32, CudaAttention::Cudnn);
  // The selftest reads the options back to check what this backend runs.
  REQUIRE(cuda_options_of(*gpu).has_value());
  CHECK(cuda_options_of(*gpu)->attention == CudaAttention::Cudnn);
  CHECK(cuda_options_of(*gpu)->gemm == GemmPrecision::Fp32);
  auto cpu = cpu_reference();
  for (AttentionDims d : {AttentionDims{3, 1, 2, 1, 8}, AttentionDims{1, 40, 2, 1, 12}}) {
    INFO("B=" << d.B << " T=" << d.T << " NH=" << d.NH << " NKV=" << d.NKV << " D=" << d.D);
    CHECK_FALSE(uses_cudnn(*gpu, d));
    const Outs g = run(*gpu, d, 21), c = run(*cpu, d, 21);
    CHECK(rel_error(g.out, c.out) < 1e-5);  // the reference kernels' fp32 tolerance
    CHECK(rel_error_floor(g.dq, c.dq, 1.0) < 1e-4);
    CHECK(rel_error_floor(g.dv, c.dv, 1.0) < 1e-4);
  }
}

TEST_CASE("cudnn attention with the deterministic option repeats its bits", "[cuda][attention][cudnn]") {
  auto gpu = cuda_backend(GemmPrecision::Fp32, CudaAttention::Cudnn, true);
  const AttentionDims d{2, 300, 8, 2, 64};
  const Outs a = run(*gpu, d, 31), b = run(*gpu, d, 31);
  CHECK(identical(a.out, b.out));
  CHECK(identical(a.lse, b.lse));
  CHECK(identical(a.dq, b.dq));
  CHECK(identical(a.dk, b.dk));
  CHECK(identical(a.dv, b.dv));
}

TEST_CASE("cudnn attention on bf16 tensors gives the fp32 entry points' bits", "[cuda][attention][cudnn][bf16]") {
  // The fp32 entry points round q, k, v, o and dO to bf16 around cuDNN; the bf16 ones take them as
  // they are. Same rounded inputs, same graphs (deterministic backward): the same bits.
  auto gpu = cuda_backend(GemmPrecision::Bf16Copy, CudaAttention::Cudnn, true);
  const AttentionDims d{2, 300, 8, 2, 64};
  // Without cuDNN (a build without it) the model must never take the bf16 path.
  REQUIRE(gpu->keeps_bf16_attention_stash(d) == uses_cudnn(*gpu, d));
  if (!uses_cudnn(*gpu, d)) return;
  const Outs a = run(*gpu, d, 41), b = run_bf16(*gpu, d, 41);
  CHECK(identical(a.out, b.out));
  CHECK(identical(a.lse, b.lse));
  CHECK(identical(a.dq, b.dq));
  CHECK(identical(a.dk, b.dk));
  CHECK(identical(a.dv, b.dv));
}

TEST_CASE("cuda model chunk with cudnn attention and bf16 GEMMs stays close to the CPU run", "[cuda][model][cudnn]") {
  ModelSpec m;
  m.name = "small";
  m.model_type = "llama";
  m.hidden_size = 256;
  m.num_layers = 2;
  m.num_heads = 4;  // head dim 64: cuDNN's path
  m.num_kv_heads = 2;
  m.intermediate_size = 384;
  m.vocab_size = 96;
  m.max_position_embeddings = 128;
  auto losses = [&](Backend& be) {
    ChunkSpec s;
    s.model = m;
    s.num_layers = 2;
    s.has_embedding = true;
    s.has_head = true;
    s.micro_batch_size = 2;
    s.seq_len = 96;
    s.seed = 23;
    ModelChunk chunk(be, s, TpContext{});
    chunk.zero_grads();
    const auto tokens = exec_test::rand_tokens(2 * 97, m.vocab_size, 9);
    std::vector<int32_t> in(2 * 96), tg(2 * 96);
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t t = 0; t < 96; ++t) {
        in[b * 96 + t] = tokens[b * 97 + t];
        tg[b * 96 + t] = tokens[b * 97 + t + 1];
      }
    }
    chunk.forward(0, MicroBatchInput{in.data(), tg.data(), nullptr});
    const float loss = chunk.loss(0);
    chunk.backward(0, nullptr, BackwardOptions{1.0f, true});
    return std::make_pair(loss, download(be, chunk.grads(), chunk.num_params()));
  };
  auto gpu = cuda_backend(GemmPrecision::Bf16, CudaAttention::Cudnn);
  auto cpu = make_cpu_backend();
  const auto g = losses(*gpu), c = losses(*cpu);
  CHECK(g.first == Approx(c.first).epsilon(1e-2));
  CHECK(rel_error(g.second, c.second) < 5e-2);
}
