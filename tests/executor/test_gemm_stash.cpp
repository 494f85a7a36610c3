// Under bf16 GEMM inputs and attention the layers keep h1, h2, act, q, k, v and the attention output
// as bf16 (executor/model/gemm_stash.h): every loss and gradient equals the run that keeps them in
// fp32 (CpuOptions::fp32_stash, the plain twin) bit for bit, at every TP / SP / recompute split,
// and the stash shrinks by exactly their 2 bytes per element, as ModelChunk::
// stash_bytes_per_micro_batch and the cost model say.
#include <catch2/catch.hpp>

#include "costmodel/executor_stash.h"
#include "exec_test_util.h"
#include "model_harness.h"
#include "executor/cpu/cpu_backend.h"
#include "executor/model/model_chunk.h"

using namespace meshplan;
using namespace meshplan::exec;

namespace {

constexpr int64_t kB = 2, kT = 16, kLayers = 2;

CpuOptions bf16(bool fp32_stash) {
  CpuOptions o;
  o.bf16_emulation = true;
  o.fp32_stash = fp32_stash;
  return o;
}

// Bytes one micro-batch's forward leaves held on a one-rank chunk with every layer.
struct Held {
  uint64_t measured = 0, expected = 0;
};
Held forward_held(const CpuOptions& o, Recompute rc) {
  auto be = make_cpu_backend(o);
  ChunkSpec s;
  s.model = exec_test::tiny_llama(kLayers);
  s.num_layers = kLayers;
  s.has_embedding = true;
  s.has_head = true;
  s.micro_batch_size = kB;
  s.seq_len = kT;
  s.recompute = rc;
  ModelChunk chunk(*be, s, TpContext{});
  const auto tok = exec_test::rand_tokens(kB * kT, s.model.vocab_size, 5);
  const uint64_t before = be->memory().held_bytes();
  chunk.forward(0, MicroBatchInput{tok.data(), tok.data(), nullptr});
  Held h{be->memory().held_bytes() - before, chunk.stash_bytes_per_micro_batch()};
  chunk.backward(0, nullptr, BackwardOptions{});
  return h;
}

}  // namespace

TEST_CASE("bf16 stash: the same losses and gradients as the fp32 stash, bit for bit",
          "[executor][bf16][stash]") {
  const ModelSpec m = exec_test::tiny_llama(kLayers);
  const int M = 2;
  const auto tokens = exec_test::rand_tokens(M * kB * (kT + 1), m.vocab_size, 11);
  for (int tp : {1, 2}) {
    for (bool sp : {false, true}) {
      if (sp && tp == 1) continue;
      for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
        exec_test::Split narrow, wide;
        narrow.tp = wide.tp = tp;
        narrow.sp = wide.sp = sp;
        narrow.recompute = wide.recompute = rc;
        narrow.cpu = bf16(false);
        wide.cpu = bf16(true);
        const exec_test::RunResult a = exec_test::run_model(m, narrow, kB, kT, M, tokens);
        const exec_test::RunResult b = exec_test::run_model(m, wide, kB, kT, M, tokens);
        INFO("tp " << tp << " sp " << sp << " recompute " << to_string(rc));
        CHECK(a.losses == b.losses);
        for (const auto& [name, g] : b.grads) {
          INFO(name);
          CHECK(a.grads.at(name) == g);
        }
        CHECK(a.peak_bytes < b.peak_bytes);
      }
    }
  }
}

TEST_CASE("bf16 stash: held bytes match the stash count and the cost model's saving",
          "[executor][bf16][stash]") {
  const ModelSpec m = exec_test::tiny_llama(kLayers);
  const double N = kB * kT, C = static_cast<double>(m.hidden_size), f = static_cast<double>(m.intermediate_size);
  const double Q = static_cast<double>(m.num_heads * m.head_dim()), K = static_cast<double>(m.num_kv_heads * m.head_dim());
  for (Recompute rc : {Recompute::None, Recompute::Selective, Recompute::Full}) {
    INFO(to_string(rc));
    const Held narrow = forward_held(bf16(false), rc), wide = forward_held(bf16(true), rc);
    CHECK(narrow.measured == narrow.expected);
    CHECK(wide.measured == wide.expected);
    // h1, h2 (N, C), act (N, f), q and att (N, Q), k and v (N, K) per layer at 2 bytes instead of 4;
    // nothing under full recompute (only the layer input is kept).
    const double saved = rc == Recompute::Full ? 0.0 : kLayers * 2.0 * (2.0 * N * C + N * f + N * (2.0 * Q + 2.0 * K));
    CHECK(static_cast<double>(wide.measured - narrow.measured) == saved);
  }
  CHECK(executor_bf16_stash_saving_bytes(m, kB, kT, 1, false, 4.0) == 2.0 * (2.0 * N * C + N * f));
  CHECK(executor_bf16_attention_saving_bytes(m, kB, kT, 1, 4.0) == 2.0 * N * (2.0 * Q + 2.0 * K));
  CHECK(executor_bf16_attention_saving_bytes(m, kB, kT, 2, 4.0) == N * (2.0 * Q + 2.0 * K));
  // fp32 activations only: a 16-bit job has nothing to save.
  CHECK(executor_bf16_stash_saving_bytes(m, kB, kT, 1, false, 2.0) == 0.0);
  // Sequence parallelism: h1 and h2 are row shards.
  CHECK(executor_bf16_stash_saving_bytes(m, kB, kT, 2, true, 4.0) == Approx(2.0 * (N * C + N * f / 2.0)));
}
