// Expert and context parallelism over MPI: 4 ranks as ep2 x cp2 train the MoE model for 5 AdamW
// steps with the all-to-all on MPI_Alltoallv and the K/V ring on MPI point-to-point; every rank
// checks the losses, and its own gradient shards of step 0, against a one-rank run.
#include <catch2/catch.hpp>

#include "dist_launch.h"
#include "ep_cp_harness.h"
#include "executor/mpi/mpi_comm.h"

using namespace meshplan;
using namespace meshplan::exec;
using namespace exec_test;

TEST_CASE("dist: ep2 x cp2 MoE with ring attention equals one rank under mpirun") {
  const char* name = "dist: ep2 x cp2 MoE with ring attention equals one rank under mpirun";
  if (!meshplan_test::inside_mpirun()) {
    std::string out;
    const int rc = meshplan_test::launch_self(4, name, &out);
    INFO(out);
    REQUIRE(rc == 0);
    return;
  }
  MpiRuntime rt(60.0);
  REQUIRE(rt.world_size() == 4);
  Grid g;
  g.ep = 2;
  g.cp = 2;
  const int w = rt.world_rank();
  const GridCoord at = grid_coord(g, w);
  auto cp = rt.world().split(at.ep, at.cp, "cp");
  auto ep = rt.world().split(at.cp, at.ep, "ep");
  RankComms comms{nullptr, cp.get(), ep.get(), &rt.world()};
  const ModelSpec m = tiny_moe();
  const int64_t B = 2, T = 16;
  const int M = 4, steps = 5;
  const std::vector<int32_t> batch = rand_tokens(int64_t{M} * B * (T + 1), m.vocab_size, 11);
  std::vector<int32_t> tokens;
  for (int s = 0; s < steps; ++s) tokens.insert(tokens.end(), batch.begin(), batch.end());
  GridRun par;
  std::mutex mu;
  train_ep_cp_rank(m, g, w, comms, B, T, M, steps, tokens, par, mu);
  // Every rank's loss is the all-reduced global one; the harness records it on world rank 0 only.
  const GridRun one = run_ep_cp_local(m, Grid{}, B, T, M, steps, tokens);
  if (w == 0) {
    REQUIRE(par.step_losses.size() == static_cast<size_t>(steps));
    for (int s = 0; s < steps; ++s) {
      INFO("step " << s << ": one rank " << one.step_losses[s] << ", ep2 x cp2 " << par.step_losses[s]);
      CHECK(std::fabs(par.step_losses[s] - one.step_losses[s]) <= 1e-5 * std::fabs(one.step_losses[s]));
    }
    CHECK(one.step_losses.back() < one.step_losses.front());
  }
  // Gradient shards this rank recorded (cp coordinate 0; replicated tensors on ep 0 only).
  int compared = 0;
  for (const auto& [tensor, full] : par.grads) {
    const std::vector<float>& ref = one.grads.at(tensor);
    REQUIRE(full.size() == ref.size());
    const bool expert = tensor.find("expert_") != std::string::npos;
    const size_t part = expert ? full.size() / g.ep : full.size();
    const size_t begin = expert ? part * at.ep : 0;
    const std::vector<float> a(full.begin() + begin, full.begin() + begin + part);
    const std::vector<float> b(ref.begin() + begin, ref.begin() + begin + part);
    INFO(tensor << " on world rank " << w);
    CHECK(rel_error(a, b) <= 1e-5);
    ++compared;
  }
  CHECK(compared == (at.cp == 0 ? (at.ep == 0 ? static_cast<int>(one.grads.size()) : 6) : 0));
}
