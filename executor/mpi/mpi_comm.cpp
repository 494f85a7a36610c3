// MpiCommunicator and MpiRuntime over OpenMPI: blocking and non-blocking fp32 collectives and p2p,
// each MPI call checked, each wait guarded by the watchdog, bytes and seconds counted.
#include "executor/mpi/mpi_comm.h"

#include <mpi.h>
#include <unistd.h>

#include <cassert>
#include <cstdlib>
#include <climits>
#include <map>
#include <string>
#include <vector>

#include "executor/mpi/mpi_check.h"

namespace meshplan::exec {

struct MpiCommunicator::Impl {
  MPI_Comm comm = MPI_COMM_NULL;
  bool owned = false;  // MPI_Comm_free on destruction (not for MPI_COMM_WORLD)
  std::string name;
  Watchdog* watchdog = nullptr;
  int rank = 0;
  int size = 1;
  int64_t next_id = 0;
  std::map<int64_t, MPI_Request> pending;
};

namespace {

int count_of(int64_t n) {
  if (n < 0 || n > INT_MAX) mpi_fail("message of more than 2^31-1 elements is not supported");
  return static_cast<int>(n);
}

MPI_Op op_of(ReduceOp op) { return op == ReduceOp::Sum ? MPI_SUM : MPI_MAX; }

// Times one blocking call into stats and under the watchdog.
class Timed {
 public:
  Timed(CommStats& stats, Watchdog* w, const char* what, uint64_t bytes)
      : stats_(stats), scope_(w, what), start_(MPI_Wtime()) {
    stats_.bytes += bytes;
    stats_.calls += 1;
  }
  ~Timed() { stats_.seconds += MPI_Wtime() - start_; }

 private:
  CommStats& stats_;
  WatchdogScope scope_;
  double start_;
};

}  // namespace

MpiCommunicator::MpiCommunicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  MPI_CHECK(MPI_Comm_rank(impl_->comm, &impl_->rank));
  MPI_CHECK(MPI_Comm_size(impl_->comm, &impl_->size));
}

MpiCommunicator::~MpiCommunicator() {
  assert(impl_->pending.empty() && "communicator destroyed with requests still pending");
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (impl_->owned && !finalized) MPI_CHECK(MPI_Comm_free(&impl_->comm));
}

int MpiCommunicator::rank() const { return impl_->rank; }
int MpiCommunicator::size() const { return impl_->size; }
const std::string& MpiCommunicator::name() const { return impl_->name; }

int MpiCommunicator::max_tag() const {
  void* value = nullptr;
  int flag = 0;
  MPI_CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag));
  return flag ? *static_cast<int*>(value) : 32767;
}

void MpiCommunicator::all_reduce(float* data, int64_t n, ReduceOp op) {
  Timed t(stats_, impl_->watchdog, "MPI all-reduce", static_cast<uint64_t>(n) * 4);
  MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, data, count_of(n), MPI_FLOAT, op_of(op), impl_->comm));
}

void MpiCommunicator::reduce_scatter_sum(const float* in, float* out, int64_t n) {
  Timed t(stats_, impl_->watchdog, "MPI reduce-scatter", static_cast<uint64_t>(n) * size() * 4);
  MPI_CHECK(MPI_Reduce_scatter_block(in, out, count_of(n), MPI_FLOAT, MPI_SUM, impl_->comm));
}

void MpiCommunicator::all_gather(const float* in, float* out, int64_t n) {
  Timed t(stats_, impl_->watchdog, "MPI all-gather", static_cast<uint64_t>(n) * size() * 4);
  MPI_CHECK(MPI_Allgather(in, count_of(n), MPI_FLOAT, out, count_of(n), MPI_FLOAT, impl_->comm));
}

void MpiCommunicator::broadcast(float* data, int64_t n, int root) {
  Timed t(stats_, impl_->watchdog, "MPI broadcast", static_cast<uint64_t>(n) * 4);
  MPI_CHECK(MPI_Bcast(data, count_of(n), MPI_FLOAT, root, impl_->comm));
}

void MpiCommunicator::broadcast_bytes(void* data, uint64_t bytes, int root) {
  Timed t(stats_, impl_->watchdog, "MPI broadcast", bytes);
  MPI_CHECK(MPI_Bcast(data, count_of(static_cast<int64_t>(bytes)), MPI_BYTE, root, impl_->comm));
}

void MpiCommunicator::send(const float* data, int64_t n, int peer, int tag) {
  Timed t(stats_, impl_->watchdog, "MPI send", static_cast<uint64_t>(n) * 4);
  MPI_CHECK(MPI_Send(data, count_of(n), MPI_FLOAT, peer, tag, impl_->comm));
}

void MpiCommunicator::recv(float* data, int64_t n, int peer, int tag) {
  Timed t(stats_, impl_->watchdog, "MPI receive", static_cast<uint64_t>(n) * 4);
  MPI_CHECK(MPI_Recv(data, count_of(n), MPI_FLOAT, peer, tag, impl_->comm, MPI_STATUS_IGNORE));
}

void MpiCommunicator::barrier() {
  Timed t(stats_, impl_->watchdog, "MPI barrier", 0);
  MPI_CHECK(MPI_Barrier(impl_->comm));
}

void MpiCommunicator::all_to_all_v(const float* send, const int64_t* send_counts, float* recv,
                                   const int64_t* recv_counts) {
  const int n = size();
  std::vector<int> sc(n), sd(n), rc(n), rd(n);
  int64_t s_at = 0, r_at = 0;
  for (int p = 0; p < n; ++p) {
    sc[p] = count_of(send_counts[p]);
    sd[p] = count_of(s_at);
    rc[p] = count_of(recv_counts[p]);
    rd[p] = count_of(r_at);
    s_at += send_counts[p];
    r_at += recv_counts[p];
  }
  Timed t(stats_, impl_->watchdog, "MPI all-to-all", static_cast<uint64_t>(s_at) * 4);
  MPI_CHECK(MPI_Alltoallv(send, sc.data(), sd.data(), MPI_FLOAT, recv, rc.data(), rd.data(),
                          MPI_FLOAT, impl_->comm));
}

static CommRequest remember(MpiCommunicator::Impl& impl, MPI_Request req, CommStats& stats,
                            uint64_t bytes) {
  stats.bytes += bytes;
  stats.calls += 1;
  CommRequest r;
  r.id = impl.next_id++;
  impl.pending.emplace(r.id, req);
  return r;
}

CommRequest MpiCommunicator::iall_reduce(float* data, int64_t n, ReduceOp op) {
  MPI_Request req;
  MPI_CHECK(MPI_Iallreduce(MPI_IN_PLACE, data, count_of(n), MPI_FLOAT, op_of(op), impl_->comm, &req));
  return remember(*impl_, req, stats_, static_cast<uint64_t>(n) * 4);
}

CommRequest MpiCommunicator::ireduce_scatter_sum(const float* in, float* out, int64_t n) {
  MPI_Request req;
  MPI_CHECK(MPI_Ireduce_scatter_block(in, out, count_of(n), MPI_FLOAT, MPI_SUM, impl_->comm, &req));
  return remember(*impl_, req, stats_, static_cast<uint64_t>(n) * size() * 4);
}

CommRequest MpiCommunicator::iall_gather(const float* in, float* out, int64_t n) {
  MPI_Request req;
  MPI_CHECK(MPI_Iallgather(in, count_of(n), MPI_FLOAT, out, count_of(n), MPI_FLOAT, impl_->comm, &req));
  return remember(*impl_, req, stats_, static_cast<uint64_t>(n) * size() * 4);
}

CommRequest MpiCommunicator::isend(const float* data, int64_t n, int peer, int tag) {
  MPI_Request req;
  MPI_CHECK(MPI_Isend(data, count_of(n), MPI_FLOAT, peer, tag, impl_->comm, &req));
  return remember(*impl_, req, stats_, static_cast<uint64_t>(n) * 4);
}

CommRequest MpiCommunicator::irecv(float* data, int64_t n, int peer, int tag) {
  MPI_Request req;
  MPI_CHECK(MPI_Irecv(data, count_of(n), MPI_FLOAT, peer, tag, impl_->comm, &req));
  return remember(*impl_, req, stats_, static_cast<uint64_t>(n) * 4);
}

void MpiCommunicator::wait(CommRequest& r) {
  if (!r.pending()) return;
  auto it = impl_->pending.find(r.id);
  assert(it != impl_->pending.end() && "wait on a request of another communicator");
  {
    WatchdogScope scope(impl_->watchdog, "MPI wait");
    const double start = MPI_Wtime();
    MPI_CHECK(MPI_Wait(&it->second, MPI_STATUS_IGNORE));
    stats_.seconds += MPI_Wtime() - start;
  }
  impl_->pending.erase(it);
  r.id = -1;
}

bool MpiCommunicator::test(CommRequest& r) {
  if (!r.pending()) return true;
  auto it = impl_->pending.find(r.id);
  assert(it != impl_->pending.end() && "test on a request of another communicator");
  int done = 0;
  MPI_CHECK(MPI_Test(&it->second, &done, MPI_STATUS_IGNORE));
  if (!done) return false;
  impl_->pending.erase(it);
  r.id = -1;
  return true;
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::split(int color, int key, const std::string& name) {
  auto impl = std::make_unique<Impl>();
  {
    WatchdogScope scope(impl_->watchdog, "MPI communicator split");
    MPI_CHECK(MPI_Comm_split(impl_->comm, color, key, &impl->comm));
  }
  MPI_CHECK(MPI_Comm_set_errhandler(impl->comm, MPI_ERRORS_RETURN));
  impl->owned = true;
  impl->name = name;
  impl->watchdog = impl_->watchdog;
  return std::make_unique<MpiCommunicator>(std::move(impl));
}

// ---- runtime ----

MpiRuntime::MpiRuntime(double comm_timeout_s) {
  int initialized = 0;
  MPI_CHECK(MPI_Initialized(&initialized));
  if (!initialized) {
    // Waiting ranks yield the core instead of spinning: ranks often share cores with each other
    // (oversubscribed CI) or with other work, where spinning steals the peer's time slice and
    // turns microsecond messages into scheduler quanta. An explicit user setting wins.
    setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
    int provided = 0;
    MPI_CHECK(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided));
    initialized_here_ = true;
  }
  MPI_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  char host[256] = {0};
  gethostname(host, sizeof(host) - 1);
  host_ = host;
  int rank = 0;
  MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  watchdog_ = std::make_unique<Watchdog>(comm_timeout_s,
                                         "rank " + std::to_string(rank) + " (host " + host_ + ")");
  auto impl = std::make_unique<MpiCommunicator::Impl>();
  impl->comm = MPI_COMM_WORLD;
  impl->name = "world";
  impl->watchdog = watchdog_.get();
  world_ = std::make_unique<MpiCommunicator>(std::move(impl));
}

MpiRuntime::~MpiRuntime() {
  world_.reset();
  if (initialized_here_) {
    WatchdogScope scope(watchdog_.get(), "MPI finalize");
    MPI_Finalize();
  }
  watchdog_.reset();
}

double MpiRuntime::wtime() { return MPI_Wtime(); }

void MpiRuntime::abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; this keeps [[noreturn]] honest if it did
}

}  // namespace meshplan::exec
