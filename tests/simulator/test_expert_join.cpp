// MoE in the simulator: every F/B with expert all-to-all is a join of the expert-parallel group
// (lanes of one rank across the replicas of one EP group): a straggler holds its EP peers at every
// MoE layer, not only at the DP reduction; the engine equals its plain twin; a member that never
// reaches the all-to-all is reported by name.
#include <catch2/catch.hpp>

#include "../costmodel/fixtures.h"
#include "../costmodel/moe_fixtures.h"
#include "simulator/durations.h"
#include "simulator/engine.h"
#include "simulator/program.h"

using namespace meshplan;

namespace {
SimInput moe_input(int replicas, int ep_group, double slow) {
  auto s = build_schedule(ScheduleKind::OneFOneB, 4, 1, 8);
  REQUIRE(s.ok());
  SimInput in = uniform_sim_input(*s, 1000, 2000);
  for (auto& c : in.chunks) {
    c.tp_forward_ns = 200;
    c.tp_backward_ns = 200;
    c.ep_forward_ns = 200;
    c.ep_backward_ns = 200;
  }
  in.replicas = replicas;
  in.ep_group_replicas = ep_group;
  in.compute_factor.assign(static_cast<size_t>(replicas) * 4, 1.0);
  in.compute_factor[3] = slow;  // replica 0, last stage
  return in;
}

SimResult run(const SimInput& in) {
  auto r = simulate_schedule(in);
  INFO((r.ok() ? std::string() : r.error().one_line()));
  REQUIRE(r.ok());
  return *r;
}
}  // namespace

TEST_CASE("expert all-to-all joins the EP group: a straggler holds its peers at every MoE layer") {
  const SimResult apart = run(moe_input(2, 1, 1.3));   // EP inside each replica: no coupling
  const SimResult joined = run(moe_input(2, 2, 1.3));  // one EP group across both replicas
  // Without the join the fast replica's last stage finishes early; with it, it starts every op with
  // the slow one and ends only the slow op's extra 30 % of its last backward (600 ns) ahead.
  CHECK(apart.lanes[3].end_ns - apart.lanes[7].end_ns > 600);
  CHECK(joined.lanes[3].end_ns - joined.lanes[7].end_ns == 600);
  CHECK(joined.lanes[7].dp_wait_ns > 0);
  CHECK(joined.step_ns == apart.step_ns);  // the slow lane itself never waits for faster peers
  // Symmetric replicas: the join costs nothing.
  CHECK(run(moe_input(2, 2, 1.0)).step_ns == run(moe_input(1, 1, 1.0)).step_ns);
}

TEST_CASE("expert joins: the event engine equals its plain sweep twin") {
  for (auto k : {ScheduleKind::OneFOneB, ScheduleKind::Interleaved, ScheduleKind::ZeroBubbleH1}) {
    INFO(to_string(k));
    auto s = build_schedule(k, 4, k == ScheduleKind::Interleaved ? 2 : 1, 8);
    REQUIRE(s.ok());
    SimInput in = uniform_sim_input(*s, 0, 0);
    for (int g = 0; g < static_cast<int>(in.chunks.size()); ++g) {
      ChunkTimes& c = in.chunks[g];
      c.forward_ns = 900 + 37 * g;
      c.backward_ns = 1900 + 50 * g;
      c.ep_forward_ns = g % 2 == 0 ? 150 : 0;  // some chunks without MoE layers
      c.ep_backward_ns = c.ep_forward_ns;
      c.dp_reduce_ns = 3000;
    }
    in.p2p_ns = 250;
    in.replicas = 4;
    in.ep_group_replicas = 2;
    in.compute_factor.assign(16, 1.0);
    in.compute_factor[2] = 1.3;
    in.compute_factor[13] = 1.1;
    auto fast = simulate_schedule(in);
    auto plain = simulate_reference(in);
    REQUIRE(fast.ok());
    REQUIRE(plain.ok());
    CHECK(fast->step_ns == plain->step_ns);
    for (size_t l = 0; l < fast->lanes.size(); ++l) {
      CHECK(fast->lanes[l].end_ns == plain->lanes[l].end_ns);
      CHECK(fast->lanes[l].dp_wait_ns == plain->lanes[l].dp_wait_ns);
      CHECK(fast->lanes[l].bubble_ns == plain->lanes[l].bubble_ns);
    }
  }
}

TEST_CASE("a member that never reaches the expert all-to-all is reported, not waited for forever") {
  SimInput in = moe_input(2, 2, 1.0);
  Program p = compile_program(in);
  // Replica 1's rank 0 runs one extra action first: its forwards no longer line up with replica 0's.
  Op extra;
  extra.kind = ActionKind::OptimizerStep;
  p.ops[4].insert(p.ops[4].begin(), extra);
  auto r = simulate_program(p, false, "moe-test");
  REQUIRE(!r.ok());
  CHECK(r.error().one_line().find("expert all-to-all") != std::string::npos);
}

TEST_CASE("EP groups span ep*etp/(tp*cp) DP replicas (Megatron-Core parallel folding)") {
  ParallelConfig c;
  c.tp = 2; c.ep = 8; c.etp = 1;
  CHECK(ep_group_replicas(c, 2) == 2);  // 8 expert ranks over replicas of 2 ranks: 4 replicas
  CHECK(ep_group_replicas(c, 1) == 1);
  c.ep = 2;
  CHECK(ep_group_replicas(c, 2) == 1);  // EP inside one replica's TP ranks
  ParallelConfig dense;
  CHECK(ep_group_replicas(dense, 2) == 1);
}
