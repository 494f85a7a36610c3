// Context parallelism: CP ring/all-gather/a2a exchange vs hand-computed closed forms, DP over dp*cp,
// activations split by cp, cp = 1 unchanged.
#include <catch2/catch.hpp>

#include "costmodel/activations.h"
#include "costmodel/attention.h"
#include "costmodel/compute_time.h"
#include "costmodel/context_parallel.h"
#include "costmodel/estimate.h"
#include "costmodel/step.h"
#include "fixtures.h"

using namespace meshplan;
using namespace meshplan_test;

namespace {
Problem long_problem(int64_t gpus, int64_t seq) {
  Problem p = problem(llama3_8b(), gpus, 8, seq);
  p.job.knobs.attention = AttentionKind::Fused;
  return p;
}

ParallelConfig cp_config(int tp, int cp, int dp) {
  ParallelConfig c;
  c.tp = tp;
  c.cp = cp;
  c.dp = dp;
  c.micro_batch_size = 1;
  c.num_micro_batches = 8 / dp;
  return c;
}
}  // namespace

TEST_CASE("cp ring: K/V hop and exposed time and compute match the closed forms") {
  Problem p = long_problem(8, 65536);
  const ParallelConfig c = cp_config(2, 4, 1);
  const double e = 2.0, b = 1.0, s_local = 65536.0 / 4, t = 2.0;
  const double kv_bytes = 2.0 * e * b * s_local * 1024.0 / t;  // kv_dim = 8 heads x 128
  const CpAttention a = cp_attention(p, c, 312e12, e);
  CHECK(a.kv_chunk_bytes == Approx(kv_bytes));
  // CP group: stride tp = 2, 4 members inside one 8-GPU node: NVLink p2p.
  const double hop = 5e-6 + kv_bytes / (300e9 * 0.8);
  CHECK(a.step_comm_forward_s == Approx(hop));
  CHECK(a.step_comm_backward_s == Approx(2.0 * hop));
  const AttentionCoreTime step = attention_core_time(p.hardware, 312e12, p.model, AttentionKind::Fused, b, s_local, 2, e);
  CHECK(a.step.forward_s == Approx(step.forward_s));
  CHECK(a.core.forward_s == Approx(4.0 * step.forward_s));
  CHECK(a.core.backward_s == Approx(4.0 * step.backward_s));
  CHECK(a.forward_exposed_s == Approx(3.0 * std::max(0.0, hop - step.forward_s)));
  CHECK(a.backward_exposed_s == Approx(3.0 * std::max(0.0, 2.0 * hop - step.backward_s) + hop));
}

TEST_CASE("cp ring: a slow link exposes (comm - compute) per ring step") {
  Problem p = long_problem(8, 16384);
  p.hardware.intra_node = {1e9, 0.0, 1.0};  // 1 GB/s: the hop outlasts every attention step
  const ParallelConfig c = cp_config(1, 8, 1);
  const CpAttention a = cp_attention(p, c, 312e12, 2.0);
  const double hop = a.kv_chunk_bytes / 1e9;
  REQUIRE(hop > a.step.backward_s);
  CHECK(a.forward_exposed_s == Approx(7.0 * (hop - a.step.forward_s)));
  CHECK(a.backward_exposed_s == Approx(7.0 * (2.0 * hop - a.step.backward_s) + hop));
}

TEST_CASE("cp all_gather and a2a: collectives exposed and closed forms") {
  Problem p = long_problem(8, 32768);
  const ParallelConfig c = cp_config(1, 8, 1);
  const double kv = 2.0 * 2.0 * 4096.0 * 1024.0;  // one chunk of s/cp = 4096 tokens
  const double bw = 300e9 * 0.8;
  p.job.cp_comm = CpComm::AllGather;
  CpAttention ag = cp_attention(p, c, 312e12, 2.0);
  const double gather = 7 * 5e-6 + (7.0 / 8.0) * 8.0 * kv / bw;
  CHECK(ag.forward_exposed_s == Approx(gather));
  CHECK(ag.backward_exposed_s == Approx(2.0 * gather));
  p.job.cp_comm = CpComm::AllToAll;
  CpAttention a2a = cp_attention(p, c, 312e12, 2.0);
  const double q = 2.0 * 4096.0 * 4096.0;
  const double qkv = 7 * 5e-6 + (7.0 / 8.0) * (q + kv) / bw;
  const double o = 7 * 5e-6 + (7.0 / 8.0) * q / bw;
  CHECK(a2a.forward_exposed_s == Approx(qkv + o));
  CHECK(a2a.backward_exposed_s == Approx(qkv + o));
  // a2a attention: the whole sequence on heads / cp.
  const AttentionCoreTime whole = attention_core_time(p.hardware, 312e12, p.model, AttentionKind::Fused, 1, 32768, 8, 2.0);
  CHECK(a2a.core.forward_s == Approx(whole.forward_s));
}

TEST_CASE("cp splits activations by cp and shards ZeRO state over dp*cp") {
  Problem p = long_problem(16, 32768);
  ParallelConfig c1 = cp_config(2, 1, 8);
  c1.zero_stage = 1;
  ParallelConfig c4 = cp_config(2, 4, 2);
  c4.zero_stage = 1;
  c4.num_micro_batches = 4;
  p.job.global_batch = 8;
  c1.num_micro_batches = 1;
  const MemoryBreakdown m1 = estimate_memory(p, c1), m4 = estimate_memory(p, c4);
  CHECK(m4.optimizer_bytes == Approx(m1.optimizer_bytes));  // dp*cp = 8 in both
  CHECK(m4.weights_bytes == Approx(m1.weights_bytes));
  const double layer_full = layer_activation_bytes(p.model, 1, 32768, 2, false, Recompute::None, 2.0, AttentionKind::Fused);
  const double layer_cp4 = layer_activation_bytes(p.model, 1, 8192, 2, false, Recompute::None, 2.0, AttentionKind::Fused);
  CHECK(layer_cp4 == Approx(layer_full / 4.0));
  CHECK(m4.activations_bytes < m1.activations_bytes / 3.0);
}

TEST_CASE("cp: linear-layer compute per GPU falls by cp and attention by about cp") {
  Problem p = long_problem(8, 32768);
  const LayerCompute l1 = layer_compute(p, cp_config(1, 1, 8));
  const LayerCompute l4 = layer_compute(p, cp_config(1, 4, 2));
  CHECK(l4.backward_weight_s < l1.backward_weight_s / 3.0);
  CHECK(l4.forward_s < l1.forward_s / 3.0);
  CHECK(l4.forward_s > l1.forward_s / 5.0);
}

TEST_CASE("cp = 1: no K/V exchange and DP group = dp and whole sequence per GPU") {
  Problem p = long_problem(8, 4096);
  ParallelConfig c = cp_config(1, 1, 8);
  CHECK(grad_group_size(c) == 8);
  CHECK(cp_local_seq(p, c) == 4096.0);
  // Without TP every exposed intra-layer communication term would be CP's: there is none.
  const LayerComm comm = layer_tp_comm(p, c, layer_compute(p, c));
  CHECK(comm.forward_s == 0.0);
  CHECK(comm.backward_s == 0.0);
  ParallelConfig c2 = cp_config(1, 2, 4);
  const LayerComm comm2 = layer_tp_comm(p, c2, layer_compute(p, c2));
  CHECK(comm2.backward_s > 0.0);  // the last dK/dV hop is never hidden
}

TEST_CASE("cp: gradient reduction runs over dp*cp ranks") {
  Problem p = long_problem(8, 32768);
  ParallelConfig a = cp_config(1, 1, 8), b = cp_config(1, 4, 2);
  a.num_micro_batches = 1;
  b.num_micro_batches = 4;
  const StageTimes sa = stage_times(p, a, 0), sb = stage_times(p, b, 0);
  a.dp_overlap = b.dp_overlap = false;
  CHECK(dp_comm(p, a, 0, sa).total_s == Approx(dp_comm(p, b, 0, sb).total_s));
}
