// MoE cost model: expert sharding by EP x ETP and the expert-data group, active-expert FLOPs,
// grouped expert GEMMs, dispatch/combine all-to-all inside vs across the NVLink domain, imbalance,
// EP/ETP layout rules; dense models untouched.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/moe_config.h"
#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/flops.h"
#include "costmodel/fp8.h"
#include "costmodel/memory.h"
#include "costmodel/moe_cost.h"
#include "costmodel/moe_layout.h"
#include "costmodel/step.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ParallelConfig moe_cfg(int tp, int pp, int dp, int ep, int etp, int zero = 1) {
  ParallelConfig c;
  c.tp = tp; c.pp = pp; c.dp = dp; c.ep = ep; c.etp = etp; c.zero_stage = zero;
  c.sequence_parallel = tp > 1;
  c.micro_batch_size = 1;
  return c;
}
Problem v3_problem(int64_t gpus, int64_t batch) {
  Problem p = meshplan_test::problem(meshplan_test::deepseek_v3(), gpus, batch, 4096);
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.convention = ParamConvention::Megatron;
  return p;
}
}  // namespace

TEST_CASE("DeepSeek-V3 fixture: 671B total, about 37B active (the technical report's figures)") {
  const ModelSpec m = meshplan_test::deepseek_v3();
  CHECK(m.num_parameters() == Approx(671e9).epsilon(0.01));
  CHECK(m.active_parameters() == Approx(37e9).epsilon(0.03));
  CHECK(moe_layer_fraction(m) == Approx(58.0 / 61.0));
}

TEST_CASE("routed experts are split by EP x ETP, the rest by TP, the stages add up to the model") {
  const ModelSpec m = meshplan_test::deepseek_v3();
  for (auto [tp, pp, ep, etp] : {std::array<int, 4>{1, 16, 64, 1}, {2, 8, 8, 2}, {8, 1, 256, 1}, {4, 4, 32, 4}}) {
    ParallelConfig c = moe_cfg(tp, pp, 64, ep, etp);
    double dense = 0, experts = 0;
    for (int s = 0; s < pp; ++s) {
      dense += stage_parameters_per_gpu(m, c, s);
      experts += stage_expert_parameters_per_gpu(m, c, s);
    }
    INFO("tp " << tp << " pp " << pp << " ep " << ep << " etp " << etp);
    const double routed = m.num_moe_layers() * m.moe.num_experts * m.expert_parameters();
    CHECK(experts * ep * etp == Approx(routed));
    // TP replicates the norms; everything else is split exactly once.
    const double norms = (2.0 * m.num_layers + 1.0) * m.hidden_size;
    CHECK((dense - norms) * tp + norms + routed == Approx(m.num_parameters()).epsilon(1e-9));
  }
}

TEST_CASE("ZeRO-1 shards expert optimizer state over the expert-data group, dense state over dp") {
  Problem p = v3_problem(2048, 2048);
  ParallelConfig c = moe_cfg(1, 16, 128, 64, 1);  // the DeepSeek-V3 report's layout: PP16 x EP64, DP128
  REQUIRE(expert_data_parallel(c) == 2);
  const MemoryBreakdown mb = stage_memory(p, c, 1);
  const double dense = stage_parameters_per_gpu(p.model, c, 1);
  const double experts = stage_expert_parameters_per_gpu(p.model, c, 1);
  CHECK(mb.weights_bytes == Approx(2.0 * (dense + experts)));
  CHECK(mb.gradients_bytes == Approx(4.0 * (dense + experts)));
  CHECK(mb.optimizer_bytes == Approx(12.0 * dense / 128 + 12.0 * experts / 2));
}

TEST_CASE("estimate_memory (fast) equals the worst stage_memory (reference) for MoE layouts") {
  Problem p = v3_problem(2048, 2048);
  for (auto [tp, pp, ep, etp, rc] : {std::array<int, 5>{1, 16, 64, 1, 0}, {2, 8, 8, 2, 1}, {8, 4, 64, 8, 2}}) {
    ParallelConfig c = moe_cfg(tp, pp, 2048 / (tp * pp), ep, etp);
    c.recompute = rc == 0 ? Recompute::None : rc == 1 ? Recompute::Selective : Recompute::Full;
    c.num_micro_batches = 2048 / c.dp;
    REQUIRE(validate_config(p, c, "test").empty());
    double worst = 0;
    for (int s = 0; s < pp; ++s) worst = std::max(worst, stage_memory(p, c, s).peak_bytes);
    CHECK(estimate_memory(p, c).peak_bytes == Approx(worst).epsilon(1e-12));
  }
}

TEST_CASE("MoE FLOPs count the k routed experts a token visits, not all E") {
  const ModelSpec m = meshplan_test::mixtral_8x7b();
  const double T = 4096;
  const LayerFlops f = layer_forward_flops(m, 1, T);
  // Mixtral: every layer MoE, no shared expert: the dense MLP part vanishes, experts = k x one MLP.
  CHECK(f.mlp_up == Approx(0.0).margin(1));
  CHECK(f.expert_up + f.expert_down == Approx(2.0 * 2.0 * T * 3.0 * 4096 * 14336));
  CHECK(f.router == Approx(2.0 * T * 4096 * 8));
  // The GEMMs of a layer are 2 x tokens x its active matrix parameters.
  const double active_layer = (m.active_parameters() - m.embedding_parameters() - m.lm_head_parameters()) / m.num_layers;
  CHECK(f.gemms() == Approx(2.0 * T * active_layer).epsilon(0.001));
}

TEST_CASE("expert GEMMs: fewer tokens per expert run lower on the efficiency curve, EP shortens them") {
  Problem p = v3_problem(2048, 2048);
  const LayerCompute ep8 = layer_compute(p, moe_cfg(1, 16, 128, 8, 1));
  const LayerCompute ep64 = layer_compute(p, moe_cfg(1, 16, 128, 64, 1));
  // Same FLOPs per GPU, but EP64 hands each GPU 4 experts with 8x the tokens each: bigger GEMMs.
  CHECK(ep64.forward_s < ep8.forward_s);
  Problem skew = p;
  skew.job.moe_imbalance = 1.5;
  CHECK(layer_compute(skew, moe_cfg(1, 16, 128, 64, 1)).forward_s > ep64.forward_s);
  Problem capped = skew;
  capped.job.moe_capacity_factor = 1.0;  // tokens above capacity are dropped
  CHECK(layer_compute(capped, moe_cfg(1, 16, 128, 64, 1)).forward_s == Approx(ep64.forward_s));
}

TEST_CASE("all-to-all: inside the NVLink domain over NVLink, beyond it over the NICs") {
  HardwareProfile hw = meshplan_test::a100();
  const double bytes = 64e6;
  const double in_node = alltoall_s(hw, 8, 1, bytes);
  const double across = alltoall_s(hw, 64, 1, bytes);
  CHECK(in_node == Approx(7.0 / 8.0 * bytes / (300e9 * 0.8) + 5e-6));
  CHECK(across == Approx(56.0 / 64.0 * bytes / (25e9 * 0.8) + 5e-6 + 10e-6));
  hw.nvlink_domain_gpus = 72;  // an NVL72 rack: EP64 stays on NVLink
  CHECK(alltoall_s(hw, 64, 1, bytes) == Approx(63.0 / 64.0 * bytes / (300e9 * 0.8) + 5e-6));
  CHECK(alltoall_s(hw, 1, 1, bytes) == 0.0);
  // ETP ranks sit between EP ranks: EP8 x ETP2 spans two nodes.
  CHECK(alltoall_s(meshplan_test::a100(), 8, 2, bytes) > in_node);
}

TEST_CASE("dispatch and combine are charged in forward and backward of every MoE layer") {
  Problem p = v3_problem(2048, 2048);
  const ParallelConfig c = moe_cfg(1, 16, 128, 64, 1);
  LayerComm comm;
  add_expert_comm(p, c, comm);
  const double bytes = 8.0 * 4096 * 7168 * 2.0;
  const double a2a = alltoall_s(p.hardware, 64, 1, bytes);
  // Dispatch also sends each routed row's probability (one bf16 element) in a second all_to_all.
  const double probs_a2a = alltoall_s(p.hardware, 64, 1, 8.0 * 4096 * 2.0);
  CHECK(comm.forward_s == Approx(58.0 / 61.0 * (2.0 * a2a + probs_a2a)));
  CHECK(comm.backward_s == Approx(comm.forward_s));
  LayerComm none;
  add_expert_comm(p, moe_cfg(1, 16, 128, 1, 1), none);  // experts local: no all-to-all
  CHECK(none.forward_s == 0.0);
}

TEST_CASE("recompute repeats the all-to-all of the checkpointed layers only: every-2-layers half of them") {
  Problem p = v3_problem(2048, 2048);
  ParallelConfig c = moe_cfg(1, 16, 128, 64, 1);
  // (recomputed / forward all-to-all of one layer, backward / forward all-to-all of a chunk)
  auto check = [&](AcPolicy a, Recompute r, double recomputed, double backward) {
    p.job.ac_policy = a;
    c.recompute = r;
    LayerComm comm;
    add_expert_comm(p, c, comm);
    const ChunkCosts k = step_costs(p, c).chunks[1];
    REQUIRE(k.ep_comm_forward_s > 0.0);
    CHECK(comm.recompute_s == recomputed * comm.forward_s);
    CHECK(k.ep_comm_backward_s == Approx(backward * k.ep_comm_forward_s).epsilon(1e-14));
  };
  const AcPolicy every2{AcPolicyKind::EveryNLayers, 2};
  check(AcPolicy{}, Recompute::None, 0.0, 1.0);
  check(AcPolicy{}, Recompute::Selective, 0.0, 1.0);  // the attention core only
  check(AcPolicy{}, Recompute::Full, 1.0, 2.0);
  check(every2, Recompute::Full, 0.5, 1.5);
  check(every2, Recompute::Selective, 0.0, 1.0);
}

TEST_CASE("expert gradients are reduced over the expert-data group") {
  Problem p = v3_problem(2048, 2048);
  ParallelConfig c = moe_cfg(1, 16, 128, 64, 1);
  c.num_micro_batches = 16;
  const StageTimes st = stage_times(p, c, 1);
  const DpComm with = dp_comm(p, c, 1, st);
  ParallelConfig all = c;
  all.ep = 128;  // edp = 1: nothing to reduce for the experts
  const DpComm without = dp_comm(p, all, 1, stage_times(p, all, 1));
  CHECK(with.total_s > without.total_s);
}

TEST_CASE("EP/ETP rules follow Megatron-Core") {
  Problem p = v3_problem(2048, 2048);
  CHECK(validate_moe_config(p, moe_cfg(1, 16, 128, 64, 1), "t").empty());
  CHECK(validate_moe_config(p, moe_cfg(1, 16, 128, 3, 1), "t").size() == 2);  // 3 divides neither 256 nor 128
  CHECK(validate_moe_config(p, moe_cfg(1, 16, 128, 256, 1), "t").size() == 1);  // 256 does not divide 128
  ParallelConfig no_sp = moe_cfg(2, 16, 64, 8, 1);
  no_sp.sequence_parallel = false;
  const ErrorList e = validate_moe_config(p, no_sp, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].field == "--sequence-parallel");
  CHECK(validate_moe_config(p, moe_cfg(1, 16, 128, 64, 1, 3), "t").empty());  // ZeRO-3: costmodel/expert_fsdp.h
  Problem dense = meshplan_test::problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  CHECK(validate_moe_config(dense, moe_cfg(1, 1, 64, 2, 1), "t").size() == 1);
  CHECK(validate_moe_config(dense, moe_cfg(8, 1, 8, 1, 1), "t").empty());
}

TEST_CASE("estimate_step on DeepSeek-V3: MFU on the active-parameter basis is plausible") {
  Problem p = v3_problem(2048, 2048);
  ParallelConfig c = moe_cfg(1, 16, 128, 64, 1);
  c.num_micro_batches = 16;
  REQUIRE(validate_config(p, c, "t").empty());
  const StepEstimate e = estimate_step(p, c);
  CHECK(e.throughput.mfu > 0.05);
  CHECK(e.throughput.mfu < 0.6);
  CHECK(e.time.tp_comm_s > 0.0);  // the all-to-all lives in the in-layer communication term
}

TEST_CASE("under a TE FP8 recipe the experts keep their quantized GEMM inputs, fc1 outputs in 16 bits") {
  Problem bf16 = v3_problem(256, 4096);
  bf16.job.framework = Framework::Megatron;
  Problem mx = bf16;
  mx.job.fp8 = Fp8Recipe::Mxfp8;
  const ParallelConfig c = [] {
    ParallelConfig x = moe_cfg(1, 16, 16, 8, 1);
    x.num_micro_batches = 256;
    return x;
  }();
  // Per MoE layer (r of them), T = 4096 tokens, e = 2, q = 1 + 1/32: the dispatched rows (k T x h) and the
  // activation's output (k T x f_e) at q instead of e; the shared expert's fc2 input (T x f_s) too, and its
  // fc1 keeps a quantized copy of the MLP input (T x h, the router keeps the 16-bit one).
  const double T = 4096, q = 1.0 + 1.0 / 32, r = moe_layer_fraction(bf16.model);
  const double routed = 8 * T;
  const double moe_delta = routed * (7168 + 2048) * (q - 2.0) + T * 2048 * (q - 2.0) + T * 7168 * q;
  const double dense_delta = fp8_stash_delta_bytes(mx, c, Recompute::None);  // attention, dense MLP share
  CHECK(layer_activation_bytes_for(mx, c) ==
        Approx(layer_activation_bytes_for(bf16, c) + dense_delta + r * moe_delta));
  Problem torchao = mx;  // torchao's Float8Linear keeps the 16-bit inputs: no change to the experts' stash
  torchao.job.knobs.fp8_saves_quantized_inputs = false;
  CHECK(layer_activation_bytes_for(torchao, c) == Approx(layer_activation_bytes_for(bf16, c)));
}
