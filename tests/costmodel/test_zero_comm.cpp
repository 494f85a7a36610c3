// ZeRO-3 / FSDP granularity, prefetch and exposure (costmodel/zero_comm.h), checked by hand.
#include <catch2/catch.hpp>

#include "costmodel/collectives.h"
#include "costmodel/estimate.h"
#include "costmodel/memory.h"
#include "costmodel/zero_comm.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("zero3_exposed_s: first gather and last reduce-scatter exposed, the rest behind compute") {
  ShardedCollectives c;
  c.layers = 4;
  c.gather_layer_s = 1.0;
  c.reduce_layer_s = 1.0;
  // Compute longer than communication: only the pass edges are exposed (1 forward, 1 + 1 backward).
  CHECK(zero3_exposed_s(c, 2.0, 3.0, false, 1) == Approx(3.0));
  // Communication longer: forward 1 + 3 x (1 - 0.5); backward 1 + 3 x (2 - 1) + 1.
  CHECK(zero3_exposed_s(c, 0.5, 1.0, false, 1) == Approx(2.5 + 5.0));
  // No prefetch: everything (4 gathers forward, 4 gathers + 4 reduce-scatters backward).
  CHECK(zero3_exposed_s(c, 10.0, 10.0, false, 0) == Approx(12.0));
  CHECK(zero3_total_s(c, false) == Approx(12.0));
  CHECK(zero3_total_s(c, true) == Approx(16.0));
  // DeepSpeed prefetching only half a layer ahead: half of every gather is exposed.
  c.prefetch_fraction = 0.5;
  CHECK(zero3_exposed_s(c, 2.0, 3.0, false, 1) == Approx(1.0 + 3 * 0.5 + 1.0 + 3 * 1.0 + 1.0));
}

TEST_CASE("FSDP gathers one unit per layer; DeepSpeed one fetch per weight matrix or prefetch bucket") {
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
