// NcclCommunicator at one rank (one GPU cannot host several NCCL ranks; multi-rank correctness of
// the same executor logic comes from the CPU backend under MPI): every collective on device memory,
// the host-memory path through the wrapped group, non-blocking requests, statistics. Skipped
// without a GPU.
#include <catch2/catch.hpp>

#include "executor/comm_local.h"
#include "test_cuda_util.h"

using namespace meshplan::exec;
using namespace cuda_test;
using exec_test::randn;

namespace {
std::unique_ptr<Communicator> nccl_self(Backend& be, bool p2p) {
  auto made = make_nccl_communicator(be, make_self_communicator(), "test", p2p);
  if (!made) FAIL(made.error().one_line());
  return std::move(made).value();
}
}  // namespace

TEST_CASE("cuda NCCL collectives at one rank are identities on device memory", "[cuda][nccl]") {
  auto gpu = cuda_backend();
  auto comm = nccl_self(*gpu, false);
  REQUIRE(comm->rank() == 0);
  REQUIRE(comm->size() == 1);
  const auto x = randn(1000, 1);
  Tensor a = upload(*gpu, x), out(*gpu, DType::F32, {1000});
  comm->all_reduce(a.f32(), 1000, ReduceOp::Sum);
  CHECK(download(*gpu, a) == x);
  comm->all_reduce(a.f32(), 1000, ReduceOp::Max);
  CHECK(download(*gpu, a) == x);
  comm->reduce_scatter_sum(a.f32(), out.f32(), 1000);
  CHECK(download(*gpu, out) == x);
  gpu->fill(out.f32(), 0.0f, 1000);
  comm->all_gather(a.f32(), out.f32(), 1000);
  CHECK(download(*gpu, out) == x);
  comm->broadcast(a.f32(), 1000, 0);
  CHECK(download(*gpu, a) == x);
  CHECK(comm->stats().calls == 5);
  CHECK(comm->stats().bytes == 5 * 4000);
}

TEST_CASE("cuda NCCL non-blocking requests order the compute stream", "[cuda][nccl]") {
  auto gpu = cuda_backend();
  auto comm = nccl_self(*gpu, false);
  Tensor a = upload(*gpu, std::vector<float>(1 << 20, 1.0f));
  gpu->scale(a.f32(), 3.0f, 1 << 20);                            // queued before: seen by the op
  CommRequest r = comm->iall_reduce(a.f32(), 1 << 20, ReduceOp::Sum);
  CHECK(r.pending());
  comm->wait(r);
  CHECK_FALSE(r.pending());
  gpu->axpy(a.f32(), 1.0f, a.f32(), 1 << 20);                    // queued after: sees the result
  CHECK(download(*gpu, a) == std::vector<float>(1 << 20, 6.0f));
  CommRequest done;
  CHECK(comm->test(done));
}

TEST_CASE("cuda NCCL communicator sends host buffers through the wrapped group", "[cuda][nccl]") {
  auto gpu = cuda_backend();
  auto comm = nccl_self(*gpu, false);
  float host[3] = {1.0f, 2.0f, 3.0f};
  comm->all_reduce(host, 3, ReduceOp::Sum);  // the trainer's loss/norm scalars live on the host
  CHECK(host[2] == 3.0f);
  char bytes[4] = {'a', 'b', 'c', 'd'};
  comm->broadcast_bytes(bytes, 4, 0);
  CHECK(bytes[3] == 'd');
  comm->barrier();
}

TEST_CASE("cuda NCCL point-to-point needs ring neighbours", "[cuda][nccl]") {
  auto gpu = cuda_backend();
  auto comm = nccl_self(*gpu, true);  // one rank: no neighbours, no pair channels
  Tensor a(*gpu, DType::F32, {4});
  CHECK_THROWS(comm->send(a.f32(), 4, 0, 1));
}
