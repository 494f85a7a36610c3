// ZeRO-3 / FSDP granularity, prefetch and exposure (costmodel/zero_comm.h), checked by hand.
#include <catch2/catch.hpp>

#include "costmodel/collectives.h"
#include "costmodel/estimate.h"
#include "costmodel/context_parallel.h"
#include "costmodel/memory.h"
#include "costmodel/step.h"
#include "costmodel/zero_comm.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

namespace {
ShardingKnobs depth(int d) {
  ShardingKnobs k;
  k.prefetch_depth = d;
  return k;
}
}  // namespace

TEST_CASE("zero3_exposed_s: first gather and last reduce-scatter exposed, the rest behind compute") {
  ShardedCollectives c;
  c.layers = 4;
  c.gather_layer_s = 1.0;
  c.reduce_layer_s = 1.0;
  // Compute longer than communication: only the pass edges are exposed (1 forward, 1 + 1 backward).
  CHECK(zero3_exposed_s(c, 2.0, 3.0, 0.0, depth(1)) == Approx(3.0));
  // Communication longer: forward 1 + 3 x (1 - 0.5); backward 1 + 3 x (2 - 1) + 1.
  CHECK(zero3_exposed_s(c, 0.5, 1.0, 0.0, depth(1)) == Approx(2.5 + 5.0));
  // No prefetch: everything (4 gathers forward, 4 gathers + 4 reduce-scatters backward).
  CHECK(zero3_exposed_s(c, 10.0, 10.0, 0.0, depth(0)) == Approx(12.0));
  CHECK(zero3_total_s(c, 0.0) == Approx(12.0));
  CHECK(zero3_total_s(c, 1.0) == Approx(16.0));
  // Half the layers re-fetched (every-2-layers under DeepSpeed): 4 x 1.5 gathers in backward.
  CHECK(zero3_total_s(c, 0.5) == 14.0);
  // Forward 1; backward: first layer's 1 + 0.5 gathers, 3 x (2.5 - 3)+ = 0 hidden misses, last rs 1.
  CHECK(zero3_exposed_s(c, 2.0, 3.0, 0.5, depth(1)) == 3.5);
  CHECK(zero3_exposed_s(c, 10.0, 10.0, 0.5, depth(0)) == 14.0);
  // DeepSpeed prefetching only half a layer ahead: half of every gather is exposed.
  c.prefetch_fraction = 0.5;
  CHECK(zero3_exposed_s(c, 2.0, 3.0, 0.0, depth(1)) == Approx(1.0 + 3 * 0.5 + 1.0 + 3 * 1.0 + 1.0));
}

TEST_CASE("zero3_exposed_s: FSDP1's forward_prefetch and backward_prefetch settings") {
  ShardedCollectives c;
  c.layers = 4;
  c.gather_layer_s = 1.0;
  c.reduce_layer_s = 2.0;
  c.gather_ends_s = 0.25;
  c.reduce_ends_s = 0.5;
  ShardingKnobs k;  // forward prefetch, BACKWARD_PRE: ends 0.25 + 1 forward; 1 + 2 + 0.5 backward
  CHECK(zero3_exposed_s(c, 5.0, 5.0, 0.0, k) == Approx(0.25 + 1.0 + 1.0 + 2.0 + 0.5));
  // forward_prefetch=False: all 4 forward gathers wait in the open.
  k.forward_prefetch = false;
  CHECK(zero3_exposed_s(c, 5.0, 5.0, 0.0, k) == Approx(0.25 + 4.0 + 1.0 + 2.0 + 0.5));
  // BACKWARD_POST: 4 gathers exposed; the reduce-scatters (2 s) fit under 5 s of compute but the
  // last; under 1.5 s of compute each of the 3 others leaves 0.5 s.
  k.backward_prefetch = BackwardPrefetch::Post;
  CHECK(zero3_exposed_s(c, 5.0, 5.0, 0.0, k) == Approx(0.25 + 4.0 + 4.0 + 2.0 + 0.5));
  CHECK(zero3_exposed_s(c, 5.0, 1.5, 0.0, k) == Approx(0.25 + 4.0 + 4.0 + 3 * 0.5 + 2.0 + 0.5));
  // No backward prefetch: every gather queued behind the previous reduce-scatter: all of it.
  k.backward_prefetch = BackwardPrefetch::None;
  CHECK(zero3_exposed_s(c, 5.0, 5.0, 0.0, k) == Approx(0.25 + 4.0 + 4 * 3.0 + 0.5));
  CHECK(zero3_exposed_s(c, 5.0, 5.0, 0.0, k) == Approx(zero3_total_s(c, 0.0)));
  // Every setting exposes at most the total and at least what full prefetch exposes.
  for (bool fwd : {true, false})
    for (auto b : {BackwardPrefetch::Pre, BackwardPrefetch::Post, BackwardPrefetch::None}) {
      k.forward_prefetch = fwd;
      k.backward_prefetch = b;
      CHECK(zero3_exposed_s(c, 0.5, 0.7, 0.0, k) <= zero3_total_s(c, 0.0) + 1e-12);
      CHECK(zero3_exposed_s(c, 0.5, 0.7, 0.0, k) >= zero3_exposed_s(c, 0.5, 0.7, 0.0, ShardingKnobs{}) - 1e-12);
    }
}

TEST_CASE("backward_prefetch names round-trip") {
  for (auto b : {BackwardPrefetch::Pre, BackwardPrefetch::Post, BackwardPrefetch::None})
    CHECK(parse_backward_prefetch(to_string(b)) == b);
  CHECK_FALSE(parse_backward_prefetch("BACKWARD_PRE").has_value());
}

TEST_CASE("FSDP gathers one unit per layer, DeepSpeed one fetch per weight matrix or prefetch bucket") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  ParallelConfig cfg;
  cfg.dp = 64;
  cfg.zero_stage = 3;
  const GroupPlacement g = place_group(p.hardware, 64, 1);
  const double layer = layer_parameters_per_gpu(p.model, 1);
  const ShardedCollectives fsdp = sharded_collectives(p, cfg, 0, g);
  CHECK(fsdp.layers == 80);
  CHECK(fsdp.gather_layer_s == Approx(all_gather_s(p.hardware, g, layer * 2.0)));
  CHECK(fsdp.reduce_layer_s == Approx(reduce_scatter_s(p.hardware, g, layer * 2.0)));
  CHECK(fsdp.prefetch_fraction == 1.0);

  p.job.knobs.sharding.granularity = ShardGranularity::Buckets;
  const ShardedCollectives ds = sharded_collectives(p, cfg, 0, g);
  // 855,654,400 params per Llama-2-70B layer: ceil(/5e7) = 18 fetches > 7 matrices.
  CHECK(layer == 855654400.0);
  CHECK(ds.gather_layer_s == Approx(18 * all_gather_s(p.hardware, g, layer * 2.0 / 18)));
  CHECK(ds.prefetch_fraction == Approx(5e7 / layer));
  CHECK(ds.gather_layer_s > fsdp.gather_layer_s);  // 17 more latency terms of 63 inter-node steps... per layer
}

TEST_CASE("the ring's latency term grows with the DP size") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_7b(), 8192, 8192, 4096);
  ParallelConfig cfg;
  cfg.zero_stage = 3;
  cfg.dp = 8192;
  const ShardedCollectives big = sharded_collectives(p, cfg, 0, place_group(p.hardware, 8192, 1));
  cfg.dp = 64;
  const ShardedCollectives small = sharded_collectives(p, cfg, 0, place_group(p.hardware, 64, 1));
  // Hierarchical: 8 per node, then a ring over the nodes with (nodes - 1) latency steps.
  CHECK(big.gather_layer_s - small.gather_layer_s > (1023 - 7) * p.hardware.inter_node.latency_s);
}

TEST_CASE("zero3_refetch_share: DeepSpeed re-fetches the recomputed layers only, FSDP none") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  ParallelConfig cfg;
  cfg.dp = 64;
  cfg.zero_stage = 3;
  auto share = [&](ShardGranularity g, AcPolicy a, Recompute r) {
    p.job.knobs.sharding.granularity = g;
    p.job.ac_policy = a;
    cfg.recompute = r;
    return zero3_refetch_share(p, cfg);
  };
  const AcPolicy megatron{}, every2{AcPolicyKind::EveryNLayers, 2}, every4{AcPolicyKind::EveryNLayers, 4};
  for (const AcPolicy& a : {megatron, every2, every4})
    for (Recompute r : {Recompute::None, Recompute::Selective, Recompute::Full})
      CHECK(share(ShardGranularity::PerUnit, a, r) == 0.0);  // FSDP's pre-backward unshard serves recompute
  CHECK(share(ShardGranularity::Buckets, megatron, Recompute::Full) == 1.0);
  CHECK(share(ShardGranularity::Buckets, every2, Recompute::Full) == 0.5);
  CHECK(share(ShardGranularity::Buckets, every4, Recompute::Full) == 0.25);
  CHECK(share(ShardGranularity::Buckets, every2, Recompute::Selective) == 0.0);
  CHECK(share(ShardGranularity::Buckets, megatron, Recompute::None) == 0.0);
}

TEST_CASE("ZeRO-3 step time: DeepSpeed with every-2-layers re-fetches half the layers, exactly") {
  Problem p = meshplan_test::problem(meshplan_test::llama2_70b(), 64, 64, 4096);
  p.job.knobs.sharding.granularity = ShardGranularity::Buckets;
  ParallelConfig cfg;
  cfg.dp = 64;
  cfg.zero_stage = 3;
  cfg.num_micro_batches = 1;
  cfg.recompute = Recompute::Full;
  cfg.dp_overlap = false;  // exposed = total: the closed form's gather count shows directly
  StageTimes st;
  st.forward_s = st.backward_s = 1.0;
  const ShardedCollectives sc = sharded_collectives(p, cfg, 0, grad_group(p.hardware, cfg));
  const double all = dp_comm(p, cfg, 0, st).total_s;
  p.job.ac_policy = AcPolicy{AcPolicyKind::EveryNLayers, 2};
  const double half = dp_comm(p, cfg, 0, st).total_s;
  CHECK(all - half == Approx(0.5 * sc.layers * sc.gather_layer_s).epsilon(1e-12));
  CHECK(half == Approx(zero3_total_s(sc, 0.5)).epsilon(1e-12));
  p.job.knobs.sharding.granularity = ShardGranularity::PerUnit;  // FSDP: no re-fetch either way
  const ShardedCollectives fsdp = sharded_collectives(p, cfg, 0, grad_group(p.hardware, cfg));
  CHECK(dp_comm(p, cfg, 0, st).total_s == Approx(zero3_total_s(fsdp, 0.0)).epsilon(1e-12));
}
