// Hybrid sharded data parallelism (costmodel/hsdp.h, core/hsdp_config.h): groups, the per-unit
// reduction, memory and DP time, checked by hand on the test A100 profile.
#include <catch2/catch.hpp>

#include <algorithm>

#include "core/framework.h"
#include "core/hsdp_config.h"
#include "costmodel/collectives.h"
#include "costmodel/estimate.h"
#include "costmodel/hsdp.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "costmodel/zero_comm.h"
#include "fixtures.h"

using namespace meshplan;
using namespace meshplan_test;
using Catch::Detail::Approx;

namespace {
// Llama 2 7B on 64 test A100s (8 nodes of 8), ZeRO-3, one sequence of 4096 tokens per GPU.
Problem seven_b() {
  Problem p = problem(llama2_7b(), 64, 64, 4096);
  p.job.knobs.attention = AttentionKind::Fused;
  p.job.framework = Framework::Fsdp;
  return p;
}
ParallelConfig zero3(int shard_group) {
  ParallelConfig c = config(1, 1, 64, 1, 1);
  c.zero_stage = 3;
  c.shard_group = shard_group;
  return c;
}
}  // namespace

TEST_CASE("HSDP groups: shard groups of consecutive DP ranks, replicas one shard group apart") {
  const HardwareProfile hw = a100();
  const ParallelConfig plain = zero3(0), node = zero3(8), two_nodes = zero3(16), whole = zero3(64);
  CHECK_FALSE(hsdp_enabled(plain));
  CHECK_FALSE(hsdp_enabled(whole));  // a shard group of all DP ranks is plain sharding
  CHECK(hsdp_enabled(node));
  CHECK(zero_shard_size(plain) == 64);
  CHECK(zero_shard_size(whole) == 64);
  CHECK(zero_shard_size(node) == 8);
  CHECK(hsdp_replicas(plain) == 1);
  CHECK(hsdp_replicas(node) == 8);
  CHECK(hsdp_replicas(two_nodes) == 4);
  const GroupPlacement s = zero_shard_group(hw, node), r = hsdp_replica_group(hw, node);
  CHECK(s.size == 8);
  CHECK_FALSE(s.spans_nodes());  // one node's 8 GPUs
  CHECK(r.size == 8);
  CHECK(r.per_node == 1);        // 8 ranks apart: one per node
  CHECK(r.nodes == 8);
  CHECK(zero_shard_group(hw, two_nodes).spans_nodes());
  // Context parallelism widens the shard: FSDP shards over dp_shard x cp (torchtitan's mesh).
  ParallelConfig cp = node;
  cp.cp = 2;
  cp.dp = 32;
  cp.shard_group = 4;
  CHECK(zero_shard_size(cp) == 8);
  CHECK(hsdp_replicas(cp) == 8);
}

TEST_CASE("hsdp_unit_reduce: the replica all-reduce pipelines behind an intra-node reduce-scatter") {
  const HardwareProfile hw = a100();  // inter-node 25 GB/s x 0.8, 10 us per step
  const double bytes = 8e8;           // one unit's gradients; its shard is 1e8 bytes
  // All-reduce of 1e8 bytes over 8 nodes, one GPU each: 2 x 7 steps of 10 us + 2 x 7/8 x 1e8 / 20e9.
  const double ar = 14 * 10e-6 + 2.0 * 7.0 / 8.0 * 1e8 / 20e9;
  const HsdpReduce none = hsdp_unit_reduce(hw, zero3(0), 1e-3, bytes);
  CHECK(none.per_unit_s == 1e-3);
  CHECK(none.drain_s == 0.0);
  const HsdpReduce node = hsdp_unit_reduce(hw, zero3(8), 1e-3, bytes);
  CHECK(node.per_unit_s == Approx(ar));  // max(rs, ar): different links
  CHECK(node.drain_s == Approx(1e-3));   // min(rs, ar) once after the last unit
  // Shard groups of two nodes: reduce-scatter and all-reduce share the NICs, so they add up. The
  // shard is 5e7 bytes, all-reduced over 4 replicas (one per node pair).
  const double ar4 = 6 * 10e-6 + 2.0 * 3.0 / 4.0 * 5e7 / 20e9;
  const HsdpReduce wide = hsdp_unit_reduce(hw, zero3(16), 1e-3, bytes);
  CHECK(wide.per_unit_s == Approx(1e-3 + ar4));
  CHECK(wide.drain_s == 0.0);
}

TEST_CASE("HSDP memory: weights, gradients and optimizer state over the shard group and the fast path agrees") {
  const Problem p = seven_b();
  const MemoryBreakdown plain = estimate_memory(p, zero3(0)), node = estimate_memory(p, zero3(8));
  CHECK(node.optimizer_bytes == Approx(plain.optimizer_bytes * 8.0));
  CHECK(node.gradients_bytes == Approx(plain.gradients_bytes * 8.0));
  CHECK(node.weights_bytes == Approx(plain.weights_bytes * 8.0));
  CHECK(node.activations_bytes == Approx(plain.activations_bytes));
  const MemoryBreakdown ref = stage_memory(p, zero3(8), 0);
  CHECK(node.peak_bytes == Approx(ref.peak_bytes));
  CHECK(node.optimizer_bytes == Approx(ref.optimizer_bytes));
}

TEST_CASE("HSDP collectives: gathers inside the shard group, each unit's reduction joined by the replica all-reduce") {
  const Problem p = seven_b();
  const HardwareProfile& hw = p.hardware;
  const ParallelConfig c = zero3(8);
  const ShardedCollectives sc = sharded_collectives(p, c, 0, zero_shard_group(hw, c));
  const double layer = layer_parameters_per_gpu(p.model, 1);
  const GroupPlacement g = zero_shard_group(hw, c);
  CHECK(sc.gather_layer_s == Approx(all_gather_s(hw, g, layer * 2.0)));
  const double rs = reduce_scatter_s(hw, g, layer * 2.0);
  const double ar = all_reduce_s(hw, hsdp_replica_group(hw, c), layer * 2.0 / 8.0);
  REQUIRE(ar > rs);  // the replicas cross nodes at 20 GB/s, the shard group is NVLink
  CHECK(sc.reduce_layer_s == Approx(ar));
  // Plain ZeRO-3 over the 64 ranks: every collective crosses the network.
  const ShardedCollectives flat = sharded_collectives(p, zero3(0), 0, zero_shard_group(hw, zero3(0)));
  CHECK(flat.gather_layer_s > 2.0 * sc.gather_layer_s);
}

TEST_CASE("HSDP step: less DP traffic than ZeRO-3 over slow inter-node links, more memory and refused where not run") {
  // (ZeRO 1 with a shard group is Megatron's partial distributed optimizer: the next test case.)
  Problem p = seven_b();
  const StepEstimate plain = estimate_step(p, zero3(0)), node = estimate_step(p, zero3(8));
  CHECK(node.time.dp_comm_s < plain.time.dp_comm_s);
  CHECK(node.memory.peak_bytes > plain.memory.peak_bytes);
  CHECK(validate_config(p, zero3(8), "test").empty());
  CHECK(validate_framework(p, zero3(8), "test").empty());
  // Frameworks without hybrid sharding refuse it, naming the flag.
  p.job.framework = Framework::DeepSpeed;
  const ErrorList fe = validate_framework(p, zero3(8), "test");
  CHECK(std::any_of(fe.begin(), fe.end(), [](const Error& e) { return e.field == "--shard-group"; }));
  p.job.framework = Framework::Meshplan;  // meshplan's executor runs no HSDP either
  CHECK_FALSE(validate_framework(p, zero3(8), "test").empty());
  // ZeRO 0 (nothing to shard), a shard group not dividing dp, expert parallelism: refused by the config
  // rules.
  ParallelConfig z0 = zero3(8);
  z0.zero_stage = 0;
  REQUIRE_FALSE(validate_hsdp_config(z0, "test").empty());
  CHECK(validate_hsdp_config(z0, "test").front().field == "--shard-group");
  CHECK_FALSE(validate_hsdp_config(zero3(7), "test").empty());
  CHECK_FALSE(validate_hsdp_config(zero3(-1), "test").empty());
  ParallelConfig ep = zero3(8);
  ep.ep = 2;
  CHECK_FALSE(validate_hsdp_config(ep, "test").empty());
  CHECK(validate_hsdp_config(zero3(64), "test").empty());  // plain
  ParallelConfig z2 = zero3(8);
  z2.zero_stage = 2;  // _HYBRID_SHARD_ZERO2
  CHECK(validate_hsdp_config(z2, "test").empty());
}

TEST_CASE("Megatron's partial distributed optimizer: ZeRO-1 over dp/R ranks, reduce-scatter then all-reduce in series") {
  Problem p = seven_b();
  p.job.framework = Framework::Megatron;
  p.job.convention = framework_spec(Framework::Megatron).convention;
  ParallelConfig c = zero3(8);
  c.zero_stage = 1;  // --use-distributed-optimizer --num-distributed-optimizer-instances 8
  CHECK(validate_config(p, c, "test").empty());
  CHECK(validate_framework(p, c, "test").empty());
  const HardwareProfile& hw = p.hardware;
  // One step's reduction: the 1e8-byte shard of 8e8 bytes all-reduced over 8 nodes after the
  // reduce-scatter, on the same stream: the two add.
  const double ar = 14 * 10e-6 + 2.0 * 7.0 / 8.0 * 1e8 / 20e9;
  CHECK(hsdp_serial_reduce_s(hw, c, 1e-3, 8e8) == Approx(1e-3 + ar));
  CHECK(hsdp_serial_reduce_s(hw, zero3(0), 1e-3, 8e8) == 1e-3);
  // Optimizer state over 8 instead of 64 ranks; weights and gradients whole (ZeRO-1).
  ParallelConfig plain = c;
  plain.shard_group = 0;
  const MemoryBreakdown m = estimate_memory(p, c), m0 = estimate_memory(p, plain);
  CHECK(m.optimizer_bytes == Approx(8.0 * m0.optimizer_bytes));
  CHECK(m.gradients_bytes == Approx(m0.gradients_bytes));
  // With no overlap the whole reduction is exposed: it grows by the all-reduce of the stage's shard.
  c.dp_overlap = plain.dp_overlap = false;
  const StepEstimate e = estimate_step(p, c), e0 = estimate_step(p, plain);
  CHECK(e.time.dp_comm_s > e0.time.dp_comm_s);
  // NeMo's YAML export has no key for it: refused there.
  p.job.framework = Framework::Nemo;
  CHECK_FALSE(validate_framework(p, c, "test").empty());
}
