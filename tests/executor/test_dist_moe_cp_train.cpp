// The trainer (exec::train, what `meshplan run` calls) on a MoE model built in C++ (the YAML keys
// come with the model-file reader): 4 MPI ranks as dp2 x cp2 with ZeRO-1 train 5 steps with the
// same losses as one rank (within 1e-5 relative); MoE layers run with every expert on each rank.
#include <catch2/catch.hpp>

#include <cmath>

#include "dist_launch.h"
#include "ep_cp_harness.h"
#include "executor/comm_local.h"
#include "executor/mpi/mpi_comm.h"
#include "executor/mpi/process_groups.h"
#include "executor/train/trainer.h"

using namespace meshplan;
using namespace meshplan::exec;

namespace {

Problem moe_problem() {
  Problem p;
  p.model = exec_test::tiny_moe(4, 1);
  p.job.gpus = 4;
  p.job.global_batch = 8;
  p.job.seq_len = 16;
  p.job.dtype = "fp32";
  return p;
}

std::vector<double> losses(const Result<TrainResult>& r) {
  std::vector<double> out;
  for (const StepRecord& s : r->steps) out.push_back(s.loss);
  return out;
}

}  // namespace

TEST_CASE("dist: trainer dp2 x cp2 ZeRO-1 on a MoE model equals one rank") {
  const char* name = "dist: trainer dp2 x cp2 ZeRO-1 on a MoE model equals one rank";
  if (!meshplan_test::inside_mpirun()) {
    std::string out;
    const int rc = meshplan_test::launch_self(4, name, &out);
    INFO(out);
    REQUIRE(rc == 0);
    return;
  }
  MpiRuntime rt(60.0);
  const Problem p = moe_problem();
  TrainOptions opt;
  opt.steps = 5;
  opt.lr.max_lr = 1e-2f;
  opt.lr.warmup_steps = 0;
  opt.lr.total_steps = 5;
  opt.lr.min_lr = 1e-3f;
  auto be1 = make_cpu_backend();
  // One rank: every process trains the whole batch alone on groups of one.
  ParallelConfig one;
  one.num_micro_batches = 8;
  auto world1 = make_self_communicator();
  ProcessGroups g1;
  g1.grid = *make_rank_grid(1, 1, 1);
  g1.world = world1.get();
  g1.tp = make_self_communicator();
  g1.dp = make_self_communicator();
  g1.pp = make_self_communicator();
  const auto ref = train(p, one, g1, *be1, opt, "test");
  REQUIRE(ref.ok());
  // dp2 x cp2: the grid's DP dimension holds dp*cp = 4 ranks.
  ParallelConfig par;
  par.dp = 2;
  par.cp = 2;
  par.zero_stage = 1;
  par.num_micro_batches = 4;
  auto grid = make_rank_grid(1, 4, 1);
  REQUIRE(grid.ok());
  ProcessGroups g = make_process_groups(rt, *grid);
  add_cp_group(rt, g, 2);
  auto be = make_cpu_backend();
  const auto got = train(p, par, g, *be, opt, "test");
  REQUIRE(got.ok());
  const std::vector<double> a = losses(ref), b = losses(got);
  REQUIRE(a.size() == 5);
  REQUIRE(b.size() == 5);
  for (size_t i = 0; i < 5; ++i) {
    INFO("step " << i << ": one rank " << a[i] << ", dp2 x cp2 " << b[i]);
    CHECK(std::fabs(b[i] - a[i]) <= 1e-5 * std::fabs(a[i]));
  }
  CHECK(a[4] < a[0]);
}
