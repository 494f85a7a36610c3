// MpiCommunicator: the Communicator of one MPI communicator (world or a TP/DP/PP sub-group), and
// MpiRuntime, which initialises MPI once per process. <mpi.h> stays inside the .cpp files.
#pragma once
#include <memory>
#include <string>

#include "executor/comm.h"
#include "executor/mpi/watchdog.h"

namespace meshplan::exec {

/// Host-memory collectives over MPI (fp32 data, MPI_SUM / MPI_MAX). Every MPI call goes through
/// MPI_CHECK; every wait happens under the runtime's watchdog, so a dead peer ends the job.
/// Reductions use MPI's own algorithms: all members receive the same result (OpenMPI's
/// all-reduce algorithms distribute one reduced copy).
class MpiCommunicator final : public Communicator {
 public:
  struct Impl;
  explicit MpiCommunicator(std::unique_ptr<Impl> impl);
  ~MpiCommunicator() override;

  int rank() const override;
  int size() const override;
  const std::string& name() const;  // "world", "tp", "dp", "pp", ...

  void all_reduce(float* data, int64_t n, ReduceOp op) override;
  void reduce_scatter_sum(const float* in, float* out, int64_t n) override;
  void all_gather(const float* in, float* out, int64_t n) override;
  void broadcast(float* data, int64_t n, int root) override;
  void broadcast_bytes(void* data, uint64_t bytes, int root) override;
  void send(const float* data, int64_t n, int peer, int tag) override;
  void recv(float* data, int64_t n, int peer, int tag) override;
  void barrier() override;
  void all_to_all_v(const float* send, const int64_t* send_counts, float* recv,
                    const int64_t* recv_counts) override;

  CommRequest iall_reduce(float* data, int64_t n, ReduceOp op) override;
  CommRequest ireduce_scatter_sum(const float* in, float* out, int64_t n) override;
  CommRequest iall_gather(const float* in, float* out, int64_t n) override;
  CommRequest isend(const float* data, int64_t n, int peer, int tag) override;
  CommRequest irecv(float* data, int64_t n, int peer, int tag) override;
  void wait(CommRequest& r) override;
  bool test(CommRequest& r) override;

  /// Collective over this communicator: members with equal `color` form a new communicator,
  /// ranked by `key` (MPI_Comm_split). Shares this communicator's watchdog.
  std::unique_ptr<MpiCommunicator> split(int color, int key, const std::string& name);
  /// Largest tag send/recv accept (MPI_TAG_UB).
  int max_tag() const;

 private:
  std::unique_ptr<Impl> impl_;
};

/// MPI for this process: MPI_Init_thread (funneled: only the main thread calls MPI) unless MPI
/// is already initialised, MPI_ERRORS_RETURN on MPI_COMM_WORLD, the watchdog, and the world
/// communicator. Finalises MPI on destruction (when it initialised it).
class MpiRuntime {
 public:
  /// comm_timeout_s: longest a single blocking communication may take (<= 0: no watchdog).
  explicit MpiRuntime(double comm_timeout_s);
  ~MpiRuntime();
  MpiRuntime(const MpiRuntime&) = delete;
  MpiRuntime& operator=(const MpiRuntime&) = delete;

  int world_rank() const { return world_->rank(); }
  int world_size() const { return world_->size(); }
  const std::string& host() const { return host_; }
  MpiCommunicator& world() { return *world_; }
  Watchdog& watchdog() { return *watchdog_; }
  /// Seconds since an arbitrary origin (MPI_Wtime).
  static double wtime();
  /// Ends the whole job now (MPI_Abort on the world with `code`): for a rank that cannot continue
  /// (a device error) while its peers would otherwise wait in a collective.
  [[noreturn]] static void abort_job(int code);

 private:
  bool initialized_here_ = false;
  std::string host_;
  std::unique_ptr<Watchdog> watchdog_;
  std::unique_ptr<MpiCommunicator> world_;
};

}  // namespace meshplan::exec
