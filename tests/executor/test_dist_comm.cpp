// MPI communicator tests: each case re-launches itself under mpirun and checks every collective,
// p2p, the non-blocking twins, bit-identical results across members and the TP/DP/PP sub-groups.
#include <catch2/catch.hpp>

#include <numeric>
#include <vector>

#include "dist_launch.h"
#include "executor/mpi/mpi_comm.h"
#include "executor/mpi/process_groups.h"

using namespace meshplan;
using namespace meshplan::exec;

// Value rank r contributes at index i (exact in fp32: small integers and halves).
static float value(int r, int64_t i) { return static_cast<float>((r + 1) * 0.5 + (i % 7)); }

static void check_collectives(Communicator& c) {
  const int n = c.size(), me = c.rank();
  const int64_t len = 1000;
  std::vector<float> x(len);
  for (int64_t i = 0; i < len; ++i) x[i] = value(me, i);
  c.all_reduce(x.data(), len, ReduceOp::Sum);
  for (int64_t i = 0; i < len; i += 97) {
    float expect = 0;
    for (int r = 0; r < n; ++r) expect += value(r, i);
    CHECK(x[i] == expect);
  }
  std::vector<float> m(len, static_cast<float>(me));
  c.all_reduce(m.data(), len, ReduceOp::Max);
  CHECK(m[5] == static_cast<float>(n - 1));

  // reduce-scatter: in (n, len), out (len) = sum over ranks of row `me`.
  std::vector<float> in(n * len), out(len);
  for (int64_t i = 0; i < n * len; ++i) in[i] = value(me, i);
  c.reduce_scatter_sum(in.data(), out.data(), len);
  float expect = 0;
  for (int r = 0; r < n; ++r) expect += value(r, me * len + 3);
  CHECK(out[3] == expect);

  // all-gather: row r = rank r's input.
  std::vector<float> mine(len, static_cast<float>(me)), all(n * len);
  c.all_gather(mine.data(), all.data(), len);
  for (int r = 0; r < n; ++r) CHECK(all[r * len + 7] == static_cast<float>(r));

  std::vector<float> b(len, static_cast<float>(me));
  c.broadcast(b.data(), len, n - 1);
  CHECK(b[9] == static_cast<float>(n - 1));

  // Ring p2p: blocking send to the right would deadlock for large messages, so use isend.
  std::vector<float> to(len, static_cast<float>(me)), from(len, -1);
  CommRequest s = c.isend(to.data(), len, (me + 1) % n, 11);
  c.recv(from.data(), len, (me + n - 1) % n, 11);
  c.wait(s);
  CHECK(from[0] == static_cast<float>((me + n - 1) % n));
}

static void check_nonblocking(Communicator& c) {
  const int n = c.size(), me = c.rank();
  const int64_t len = 4096;
  std::vector<float> a(len, 1.0f), in(n * len, static_cast<float>(me)), out(len), g(n * len);
  std::vector<float> mine(len, static_cast<float>(me));
  CommRequest r1 = c.iall_reduce(a.data(), len, ReduceOp::Sum);
  CommRequest r2 = c.ireduce_scatter_sum(in.data(), out.data(), len);
  CommRequest r3 = c.iall_gather(mine.data(), g.data(), len);
  c.wait(r3);
  c.wait(r1);
  c.wait(r2);
  CHECK_FALSE(r1.pending());
  CHECK(a[100] == static_cast<float>(n));
  CHECK(out[100] == static_cast<float>(n * (n - 1) / 2));
  CHECK(g[(n - 1) * len] == static_cast<float>(n - 1));
  CommRequest none;
  c.wait(none);  // no-op
  CHECK(c.stats().calls > 0);
  CHECK(c.stats().bytes > 0);
}

// Sums of non-representable values: every member must see the same bits.
static void check_identical_bits(Communicator& c) {
  const int64_t len = 10000;
  std::vector<float> x(len);
  for (int64_t i = 0; i < len; ++i) x[i] = 0.1f * static_cast<float>(c.rank() + 1) + 1e-3f * i / 3.0f;
  c.all_reduce(x.data(), len, ReduceOp::Sum);
  std::vector<float> all(c.size() * len);
  c.all_gather(x.data(), all.data(), len);
  for (int r = 1; r < c.size(); ++r)
    CHECK(std::equal(all.begin(), all.begin() + len, all.begin() + r * len));
}

TEST_CASE("dist: MPI collectives on 4 ranks") {
  if (!meshplan_test::inside_mpirun()) {
    std::string out;
    int rc = meshplan_test::launch_self(4, "dist: MPI collectives on 4 ranks", &out);
    INFO(out);
    REQUIRE(rc == 0);
    return;
  }
  MpiRuntime rt(60.0);
  check_collectives(rt.world());
  check_nonblocking(rt.world());
  check_identical_bits(rt.world());
}

TEST_CASE("dist: TP, DP and PP groups of a tp2 dp2 pp2 grid") {
  if (!meshplan_test::inside_mpirun()) {
    std::string out;
    int rc = meshplan_test::launch_self(8, "dist: TP, DP and PP groups of a tp2 dp2 pp2 grid", &out);
    INFO(out);
    REQUIRE(rc == 0);
    return;
  }
  MpiRuntime rt(60.0);
  auto grid = make_rank_grid(2, 2, 2);
  REQUIRE(grid.ok());
  ProcessGroups g = make_process_groups(rt, *grid);
  for (GroupKind k : {GroupKind::Tp, GroupKind::Dp, GroupKind::Pp}) {
    Communicator& c = g.group(k);
    std::vector<int> members = grid->group(k, rt.world_rank());
    CHECK(c.size() == 2);
    // The group's rank is the coordinate along it, and the sum of world ranks is the members'.
    float w = static_cast<float>(rt.world_rank());
    c.all_reduce(&w, 1, ReduceOp::Sum);
    CHECK(w == static_cast<float>(members[0] + members[1]));
    CHECK(members[c.rank()] == rt.world_rank());
    check_collectives(c);
  }
  CHECK(g.coord == grid->coords(rt.world_rank()));
}
