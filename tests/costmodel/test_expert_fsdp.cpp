// ZeRO-3 / FSDP over routed experts (costmodel/expert_fsdp.h): shards over the expert-data group,
// two gathered MoE layers, per-layer all-gather and reduce-scatter joined to the block's own, FSDP2's
// copies; each term by hand; edp = 1 and dense models untouched.
#include <catch2/catch.hpp>

#include "core/framework.h"
#include "core/moe_config.h"
#include "costmodel/collectives.h"
#include "costmodel/compute_time.h"
#include "costmodel/estimate.h"
#include "costmodel/expert_fsdp.h"
#include "costmodel/fsdp2_copies.h"
#include "costmodel/grad_accumulation.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/moe_layout.h"
#include "costmodel/step.h"
#include "costmodel/zero_comm.h"
#include "fixtures.h"
#include "moe_fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
// DeepSeek-V3 on 256 GPUs: tp 1, pp 8, dp 32, ep 8 -> edp 4 (expert-data ranks 8 apart).
Problem v3(Framework f = Framework::Meshplan) {
  Problem p = meshplan_test::problem(meshplan_test::deepseek_v3(), 256, 256, 4096);
  p.job.framework = f;
  p.job.knobs = framework_knobs(framework_spec(f));
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.convention = ParamConvention::Megatron;
  return p;
}
ParallelConfig layout(int zero, int ep) {
  ParallelConfig c = meshplan_test::config(1, 8, 32, 1, 8);
  c.zero_stage = zero;
  c.ep = ep;
  c.etp = 1;
  return c;
}
// Local expert parameters of one MoE layer: E/ep experts of 3 h f_e.
double moe_layer_experts(const ModelSpec& m, int ep) {
  return static_cast<double>(m.moe.num_experts) / ep * m.expert_parameters();
}
}  // namespace

TEST_CASE("ZeRO-3 with EP is a valid layout but DeepSpeed refuses it and hybrid sharding of the experts is refused") {
  const Problem p = v3();
  CHECK(validate_moe_config(p, layout(3, 8), "t").empty());
  ParallelConfig hsdp = layout(3, 1);
  hsdp.shard_group = 8;
  const ErrorList e = validate_moe_config(p, hsdp, "t");
  REQUIRE(e.size() == 1);
  CHECK(e[0].field == "--shard-group");
  const Problem ds = v3(Framework::DeepSpeed);
  ParallelConfig flat = layout(3, 8);
  flat.pp = 1;
  flat.dp = 256;
  const ErrorList d = validate_framework(ds, flat, "t");
  REQUIRE(d.size() == 1);
  CHECK(d[0].field == "--zero");
  CHECK(d[0].message.find("MoE not supported with Stage 3") != std::string::npos);
  flat.zero_stage = 1;
  CHECK(validate_framework(ds, flat, "t").empty());
}

TEST_CASE("ZeRO-3 shards every expert byte over the expert-data group and holds two gathered MoE layers") {
  const Problem p = v3();
  const ParallelConfig c = layout(3, 8);
  REQUIRE(expert_data_parallel(c) == 4);
  REQUIRE(experts_fully_sharded(p, c));
  const int stage = 3;
  const double dense = stage_parameters_per_gpu(p.model, c, stage);
  const double experts = stage_expert_parameters_per_gpu(p.model, c, stage);
  const MemoryBreakdown mb = stage_memory(p, c, stage);
  CHECK(mb.weights_bytes == Approx(2.0 * dense / 32 + 2.0 * experts / 4));
  CHECK(mb.gradients_bytes == Approx(4.0 * dense / 32 + 4.0 * experts / 4));
  CHECK(mb.optimizer_bytes == Approx(12.0 * dense / 32 + 12.0 * experts / 4));
  // The gathered buffers: two dense layers (as before) and two MoE layers' 32 local experts, 2 bytes each.
  CHECK(expert_gather_buffer_bytes(p, c) == Approx(2.0 * 2.0 * moe_layer_experts(p.model, 8)));
  ParallelConfig z2 = c;
  z2.zero_stage = 2;
  const double buffers = 2.0 * 2.0 * layer_parameters_per_gpu(p.model, 1) + expert_gather_buffer_bytes(p, c);
  CHECK(mb.activations_bytes - stage_memory(p, z2, stage).activations_bytes == Approx(buffers));
  // The fast path agrees with the reference.
  double worst = 0;
  for (int s = 0; s < c.pp; ++s) worst = std::max(worst, stage_memory(p, c, s).peak_bytes);
  CHECK(estimate_memory(p, c).peak_bytes == Approx(worst).epsilon(1e-12));
}

TEST_CASE("each block also gathers its experts and reduce-scatters their gradients over the expert-data group") {
  const Problem p = v3();
  const ParallelConfig c = layout(3, 8);
  const GroupPlacement g = place_group(p.hardware, 4, 8);
  const double pe = moe_layer_experts(p.model, 8);
  const double r = 58.0 / 61.0;  // MoE layers of the mean layer
  const ExpertLayerCollectives x = expert_layer_collectives(p, c);
  CHECK(x.gather_s == Approx(r * all_gather_s(p.hardware, g, 2.0 * pe)));
  CHECK(x.reduce_s == Approx(r * reduce_scatter_s(p.hardware, g, grad_reduce_bytes_per_param(p) * pe)));
  CHECK(g.nodes == 4);  // 4 ranks 8 apart: one per node of 8 GPUs
  // Added to the block's own collectives (the same layout with the experts whole, ep 32: edp 1).
  const GroupPlacement dp = zero_shard_group(p.hardware, c);
  const ShardedCollectives with = sharded_collectives(p, c, 2, dp);
  const ShardedCollectives whole = sharded_collectives(p, layout(3, 32), 2, dp);
  CHECK(expert_layer_collectives(p, layout(3, 32)).gather_s == 0.0);
  CHECK(with.gather_layer_s - whole.gather_layer_s == Approx(x.gather_s));
  CHECK(with.reduce_layer_s - whole.reduce_layer_s == Approx(x.reduce_s));
  CHECK(with.gather_ends_s == whole.gather_ends_s);
}

TEST_CASE("under ZeRO-3 the experts' step-level reduction gives way to the per-layer one") {
  const Problem p = v3();
  const ParallelConfig c = layout(3, 8);
  const StageTimes st = stage_times(p, c, 2);
  const DpComm dc = dp_comm(p, c, 2, st);
  const ShardedCollectives sc = sharded_collectives(p, c, 2, zero_shard_group(p.hardware, c));
  // Everything is the per-layer collectives of 8 micro-batches: no separate expert reduce or gather.
  CHECK(dc.total_s == Approx(8.0 * zero3_total_s(sc, zero3_refetch_share(p, c))));
  // ZeRO-2 keeps the experts' reduce-scatter per micro-batch and the gather after the optimizer: the
  // same layout with the experts whole (ep 32, edp 1) reduces less.
  const ParallelConfig z2 = layout(2, 8), whole = layout(2, 32);
  CHECK(dp_comm(p, z2, 2, stage_times(p, z2, 2)).total_s > dp_comm(p, whole, 2, stage_times(p, whole, 2)).total_s);
}

TEST_CASE("FSDP2 packs the experts too: their copies over the expert-data degree join the block's") {
  const Problem p = v3(Framework::Torchtitan);
  ParallelConfig c = layout(3, 8);
  c.pp = 1;
  c.dp = 256;
  c.num_micro_batches = 1;
  c.ep = 64;  // edp 4
  REQUIRE(experts_fully_sharded(p, c));
  const Fsdp2CopyTimes all = fsdp2_copy_times(p, c);
  const Fsdp2CopyTimes x = expert_fsdp2_copy_times(p, c);
  const double pe = 58.0 / 61.0 * moe_layer_experts(p.model, 64);
  const EagerBytes b = fsdp2_copy_bytes(pe, 4, 2.0, kFsdp2ReduceBytes);
  CHECK(x.forward_s == Approx(memory_bound_time_s(p.hardware, b.forward)));
  CHECK(x.backward_s == Approx(memory_bound_time_s(p.hardware, b.backward)));
  const EagerBytes d = fsdp2_copy_bytes(layer_parameters_per_gpu(p.model, 1), 256, 2.0, kFsdp2ReduceBytes);
  CHECK(all.forward_s == Approx(memory_bound_time_s(p.hardware, d.forward) + x.forward_s));
  CHECK(all.backward_s == Approx(memory_bound_time_s(p.hardware, d.backward) + x.backward_s));
}

TEST_CASE("FSDP2 under a pipeline keeps the stage experts gathered all step as its dense units") {
  const Problem p = v3(Framework::Torchtitan);
  const ParallelConfig c = layout(3, 8);
  const double experts = stage_expert_parameters_per_gpu(p.model, c, 1);
  const StaticBytes ex = stage_expert_static_bytes(p, c, 1);
  CHECK(ex.weights == Approx(2.0 * experts));                  // unsharded 16-bit weights
  CHECK(ex.gradients == Approx(kFsdp2ReduceBytes * experts));  // unsharded fp32 accumulators
  CHECK(ex.optimizer == Approx(12.0 * experts / 4));
  CHECK(expert_gather_buffer_bytes(p, c) > 0.0);
  CHECK(stage_memory(p, c, 1).activations_bytes == Approx(stage_memory(p, layout(2, 8), 1).activations_bytes));
}

TEST_CASE("dense models or edp 1 or ZeRO below 3 have no expert FSDP terms") {
  const Problem p = v3();
  CHECK_FALSE(experts_fully_sharded(p, layout(3, 32)));  // edp 1
  CHECK_FALSE(experts_fully_sharded(p, layout(2, 8)));
  CHECK(expert_gather_buffer_bytes(p, layout(2, 8)) == 0.0);
  const Problem dense = meshplan_test::problem(meshplan_test::llama2_70b(), 256, 256, 4096);
  ParallelConfig c = layout(3, 1);
  CHECK_FALSE(experts_fully_sharded(dense, c));
  CHECK(expert_layer_collectives(dense, c).gather_s == 0.0);
}
