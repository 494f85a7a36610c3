// Alpha-beta collective costs, bus-bandwidth factors and placement.
#include <catch2/catch.hpp>

#include "costmodel/collectives.h"
#include "fixtures.h"

using namespace meshplan;
using Catch::Detail::Approx;

TEST_CASE("ring all-reduce of 7B bf16 gradients (14 GB) over 64 GPUs at 12.5 GB/s takes ~2.2 s (seed)") {
  LinkSpec link{12.5e9, 0.0, 1.0};
  const double t = collective_time_s(Collective::AllReduceRing, 14e9, 64, link);
  CHECK(t == Approx(2.0 * 63.0 / 64.0 * 14e9 / 12.5e9));  // 2.205 s
  CHECK(t == Approx(2.205).epsilon(1e-3));
}

TEST_CASE("bus-bandwidth factors follow nccl-tests PERFORMANCE.md") {
  CHECK(bus_bandwidth_factor(Collective::AllReduceRing, 8) == Approx(2.0 * 7 / 8));
  CHECK(bus_bandwidth_factor(Collective::ReduceScatter, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::AllGather, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::AllToAll, 8) == Approx(7.0 / 8));
  CHECK(bus_bandwidth_factor(Collective::PointToPoint, 2) == 1.0);
  CHECK(bus_bandwidth_factor(Collective::AllReduceRing, 1) == 0.0);
}

TEST_CASE("latency terms: ring 2(n-1) alpha, tree 2 log2(n) alpha") {
  LinkSpec link{1e30, 1e-5, 1.0};  // bandwidth so large only latency remains
  CHECK(collective_time_s(Collective::AllReduceRing, 1.0, 16, link) == Approx(30e-5));
  CHECK(collective_time_s(Collective::AllReduceTree, 1.0, 16, link) == Approx(8e-5));
  CHECK(collective_time_s(Collective::AllGather, 1.0, 16, link) == Approx(15e-5));
  CHECK(collective_time_s(Collective::PointToPoint, 1.0, 2, link) == Approx(1e-5));
  CHECK(collective_time_s(Collective::AllReduceRing, 1e9, 1, link) == 0.0);
}

TEST_CASE("group placement from size and stride on 8-GPU nodes") {
  HardwareProfile hw = meshplan_test::a100();
  GroupPlacement tp8 = place_group(hw, 8, 1);
  CHECK(tp8.per_node == 8); CHECK(tp8.nodes == 1); CHECK_FALSE(tp8.spans_nodes());
  GroupPlacement dp16_tp2 = place_group(hw, 16, 2);  // 4 members per node, 4 nodes
  CHECK(dp16_tp2.per_node == 4); CHECK(dp16_tp2.nodes == 4);
  GroupPlacement dp4_tp8 = place_group(hw, 4, 8);  // one member per node
  CHECK(dp4_tp8.per_node == 1); CHECK(dp4_tp8.nodes == 4);
}

TEST_CASE("placement-aware all-reduce: intra link inside a node, hierarchical across nodes") {
  HardwareProfile hw = meshplan_test::a100();
  const double S = 1e9;
  CHECK(all_reduce_s(hw, place_group(hw, 8, 1), S) ==
        Approx(collective_time_s(Collective::AllReduceRing, S, 8, hw.intra_node)));
  CHECK(all_reduce_s(hw, place_group(hw, 4, 8), S) ==
        Approx(collective_time_s(Collective::AllReduceRing, S, 4, hw.inter_node)));
  // 16 ranks, 4 per node: intra RS (4) + inter AR of S/4 (4 nodes) + intra AG (4).
  const double hier = 2 * collective_time_s(Collective::ReduceScatter, S, 4, hw.intra_node) +
                      collective_time_s(Collective::AllReduceRing, S / 4, 4, hw.inter_node);
  CHECK(all_reduce_s(hw, place_group(hw, 16, 2), S) == Approx(hier));
  CHECK(hier < collective_time_s(Collective::AllReduceRing, S, 16, hw.inter_node));
  CHECK(reduce_scatter_s(hw, place_group(hw, 16, 2), S) + all_gather_s(hw, place_group(hw, 16, 2), S) ==
        Approx(hier));
}
