// Fused vs materialized attention: stashed bytes, hardware FLOPs and kernel time, checked by hand.
#include <catch2/catch.hpp>

#include <algorithm>

#include "costmodel/activations.h"
#include "costmodel/attention.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/flops.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// Llama-3-8B at seq 8192, one sequence per micro-batch, no recompute, ZeRO-3 over 8 GPUs, bf16.
Problem llama3_8b_problem(AttentionKind k) {
  Problem p = meshplan_test::problem(meshplan_test::llama3_8b(), 8, 8, 8192);
  p.job.knobs.attention = k;
  return p;
}
ParallelConfig zero3_dp8() {
  ParallelConfig c;
  c.dp = 8;
  c.zero_stage = 3;
  c.micro_batch_size = 1;
  c.num_micro_batches = 1;
  return c;
}
}  // namespace

TEST_CASE("fused attention stashes one fp32 log-sum-exp per row and head, not s x s scores") {
  const ModelSpec m = meshplan_test::llama3_8b();
  CHECK(attention_core_stash_bytes(m, AttentionKind::Fused, 1, 8192, 2) == 4.0 * 32 * 8192);
  CHECK(attention_core_stash_bytes(m, AttentionKind::Materialized, 1, 8192, 2) == 2.0 * 32 * 8192.0 * 8192);
  // Per layer by hand, e = 2, no dropout, h = 4096, kv = 1024, f = 14336 (gated):
  //   R = 4e s h = 268,435,456;  S = e s (2h + 2kv) + 3 e s f = 167,772,160 + 704,643,072;
  //   A (fused) = 4 a s = 1,048,576;  A (materialized) = e a s^2 = 4,294,967,296.
  CHECK(layer_activation_bytes(m, 1, 8192, 1, false, Recompute::None, 2.0, AttentionKind::Fused) ==
        268435456.0 + 872415232.0 + 1048576.0);
  CHECK(layer_activation_bytes(m, 1, 8192, 1, false, Recompute::None, 2.0, AttentionKind::Materialized) ==
        268435456.0 + 872415232.0 + 4294967296.0);
}

TEST_CASE("Llama-3-8B, seq 8192, no recompute, ZeRO-3 on 8 GPUs: ~42 GB of activations with fused attention") {
  const MemoryBreakdown fused = estimate_memory(llama3_8b_problem(AttentionKind::Fused), zero3_dp8());
  // 32 layers x 1,141,899,264 + head (final-norm and LM-head inputs 2e s h = 134,217,728, fp32 logits
  // 4 s V = 4,202,692,608) + ZeRO-3 buffers (2 gathered layers x 218,112,000 params x 2 bytes).
  const double expected = 32 * 1141899264.0 + 134217728.0 + 4202692608.0 + 2 * 218112000.0 * 2;
  CHECK(fused.activations_bytes == Approx(expected).epsilon(1e-12));
  CHECK(fused.activations_bytes == Approx(41.750134784e9).epsilon(1e-12));
  const MemoryBreakdown mat = estimate_memory(llama3_8b_problem(AttentionKind::Materialized), zero3_dp8());
  CHECK(mat.activations_bytes - fused.activations_bytes == Approx(32 * (4294967296.0 - 1048576.0)));
  CHECK(mat.activations_bytes > 179e9);  // the "charged ~179 GB"
}

TEST_CASE("fused attention's backward recomputes Q K^T: hardware FLOPs, not model FLOPs") {
  const ModelSpec m = meshplan_test::llama3_8b();
  const double s = 8192, B = 4;
  const StepFlops mat = step_flops(m, B, s, Recompute::None, AttentionKind::Materialized);
  const StepFlops fused = step_flops(m, B, s, Recompute::None, AttentionKind::Fused);
  CHECK(fused.model == mat.model);
  CHECK(mat.hardware == mat.model);
  CHECK(fused.hardware - fused.model == Approx(32 * 2.0 * B * s * s * 4096));
}

TEST_CASE("causal block fraction of a 128-tile flash kernel") {
  CHECK(causal_block_fraction(128) == 1.0);
  CHECK(causal_block_fraction(2048) == 17.0 / 32.0);
  CHECK(causal_block_fraction(8192) == 65.0 / 128.0);
}

TEST_CASE("fused attention kernel time: causal work at FlashAttention's relative efficiency") {
  const HardwareProfile hw = meshplan_test::a100();
  const ModelSpec m = meshplan_test::llama3_8b();
  const double peak = 312e12, b = 1, s = 4096;
  const int t = 2;
  const AttentionCoreTime at = attention_core_time(hw, peak, m, AttentionKind::Fused, b, s, t, 2.0);
  const double work = (33.0 / 64.0) * 4.0 * b * s * s * 4096 / t;  // 2 GEMMs of 2 b s^2 h, causal blocks
  CHECK(at.forward_s == Approx(work / (peak * gemm_efficiency(hw, work) * kFusedForwardRelEfficiency)));
  CHECK(at.backward_s ==
        Approx(2.5 * work / (peak * gemm_efficiency(hw, 2.5 * work) * kFusedBackwardRelEfficiency)));
  CHECK(at.forward_elementwise_s == 0.0);
  // Materialized: full square, each GEMM at least its scores' traffic 2 b a s^2 / t bytes, plus the softmax's
  // 4 b a s^2 / t bytes through HBM (Llama 3 trains without dropout: no dropout bytes).
  REQUIRE_FALSE(m.dropout);
  const AttentionCoreTime mt = attention_core_time(hw, peak, m, AttentionKind::Materialized, b, s, t, 2.0);
  const double g = 2.0 * b * s * s * 4096 / t;
  const double bw = hw.hbm_bytes_per_s * hw.hbm_efficiency;
  const double io = 2.0 * b * 32 * s * s / t / bw;
  const double ew = 4.0 * b * 32 * s * s / t / bw;
  CHECK(mt.forward_s == Approx(2 * std::max(g / (peak * gemm_efficiency(hw, g)), io) + ew));
  CHECK(mt.backward_s == Approx(2 * mt.forward_s));
  CHECK(at.forward_s < mt.forward_s);
}

TEST_CASE("fused attention: a step is faster and fits where materialized does not") {
  const ParallelConfig c = zero3_dp8();
  const StepEstimate f = estimate_step(llama3_8b_problem(AttentionKind::Fused), c);
  const StepEstimate m = estimate_step(llama3_8b_problem(AttentionKind::Materialized), c);
  CHECK(f.fits);
  CHECK_FALSE(m.fits);
  CHECK(f.time.compute_s < m.time.compute_s);
  CHECK(f.throughput.hfu > f.throughput.mfu);
}

TEST_CASE("materialized attention: each score GEMM takes at least the scores' HBM traffic, no dropout bytes without dropout") {
  const HardwareProfile hw = meshplan_test::a100();
  ModelSpec m = meshplan_test::llama3_8b();
  m.num_heads = 64;  // 64 heads of 64: 128 FLOPs per 2-byte score, below the A100's FLOP/byte ridge
  m.num_kv_heads = 8;
  m.dropout = false;
  const double peak = 312e12, b = 1, s = 4096;
  const int t = 2;
  const double bw = hw.hbm_bytes_per_s * hw.hbm_efficiency;
  const double io = 2.0 * b * 64 * s * s / t / bw;  // write Q K^T's scores, or read P in P V
  const double g = 2.0 * b * s * s * 4096 / t;      // one GEMM's FLOPs (a d = h)
  const double gemm = g / (peak * gemm_efficiency(hw, g));
  REQUIRE(io > gemm);  // traffic-bound here
  const AttentionCoreTime mt = attention_core_time(hw, peak, m, AttentionKind::Materialized, b, s, t, 2.0);
  const double ew = 4.0 * b * 64 * s * s / t / bw;  // softmax read + write, no dropout
  CHECK(mt.forward_s == Approx(2 * io + ew));
  CHECK(mt.forward_elementwise_s == Approx(ew));
  CHECK(mt.backward_s == Approx(2 * mt.forward_s));
  m.dropout = true;  // dropout adds its read, write and 1-byte mask: 9 bytes per score in all
  const AttentionCoreTime md = attention_core_time(hw, peak, m, AttentionKind::Materialized, b, s, t, 2.0);
  CHECK(md.forward_s == Approx(2 * io + 9.0 * b * 64 * s * s / t / bw));
}
