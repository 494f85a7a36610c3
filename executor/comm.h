// Communicator: the collective/point-to-point interface of one process group (TP, PP, DP, world).
// Implementations: SelfCommunicator and in-process thread groups (comm_local.h, for tests); MPI
// (CPU) and NCCL (GPU) live in their own files. Pointers are the backend's device pointers.
#pragma once
#include <cstdint>

namespace meshplan::exec {

enum class ReduceOp { Sum, Max };

/// Handle of a non-blocking operation; wait() completes it. Default-constructed = nothing pending.
struct CommRequest {
  int64_t id = -1;
  bool pending() const { return id >= 0; }
};

/// What this rank has passed through its communicator (for "time in communication").
/// bytes: all_reduce n*4, reduce_scatter size*n*4 (its input), all_gather size*n*4 (its output),
/// broadcast n*4, send/recv n*4. seconds: wall time inside blocking calls and wait().
struct CommStats {
  uint64_t bytes = 0;
  double seconds = 0;
  uint64_t calls = 0;
};

/// A process group. Every collective must be called by all members in the same order with the
/// same n. Blocking calls return when this rank's part is complete. The i* calls start the same
/// operation and return a request; buffers must stay untouched until wait() returns.
/// Collectives are deterministic: every member gets bit-identical results.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;  // 0..size()-1 inside this group
  virtual int size() const = 0;

  /// In place: data (n) = op over ranks of data (n).
  virtual void all_reduce(float* data, int64_t n, ReduceOp op) = 0;
  void all_reduce_sum(float* data, int64_t n) { all_reduce(data, n, ReduceOp::Sum); }
  /// out (n) = sum over ranks r of in[rank() * n .. rank() * n + n) where in is (size, n).
  virtual void reduce_scatter_sum(const float* in, float* out, int64_t n) = 0;
  /// out (size, n): row r is rank r's in (n).
  virtual void all_gather(const float* in, float* out, int64_t n) = 0;
  /// data (n) copied from root to every rank.
  virtual void broadcast(float* data, int64_t n, int root) = 0;
  /// Raw bytes from root (ids, small host structs); host memory.
  virtual void broadcast_bytes(void* data, uint64_t bytes, int root) = 0;
  /// Point-to-point; a send matches the recv with the same (source, tag) in order.
  virtual void send(const float* data, int64_t n, int peer, int tag) = 0;
  virtual void recv(float* data, int64_t n, int peer, int tag) = 0;
  virtual void barrier() = 0;
  /// All-to-all with per-peer counts (expert dispatch/combine): send holds size() consecutive
  /// blocks, block p (send_counts[p] floats) going to rank p; recv gets size() blocks, block p
  /// (recv_counts[p] floats) from rank p. Counts must agree pairwise. The default runs it as
  /// isend/irecv pairs (comm_all_to_all.cpp); MPI overrides it with MPI_Alltoallv.
  virtual void all_to_all_v(const float* send, const int64_t* send_counts, float* recv,
                            const int64_t* recv_counts);

  virtual CommRequest iall_reduce(float* data, int64_t n, ReduceOp op) = 0;
  virtual CommRequest ireduce_scatter_sum(const float* in, float* out, int64_t n) = 0;
  virtual CommRequest iall_gather(const float* in, float* out, int64_t n) = 0;
  virtual CommRequest isend(const float* data, int64_t n, int peer, int tag) = 0;
  virtual CommRequest irecv(float* data, int64_t n, int peer, int tag) = 0;
  /// Completes `r` (no-op when nothing is pending) and clears it.
  virtual void wait(CommRequest& r) = 0;
  /// Non-blocking completion check (added for the pipeline's early buffer release): true, and `r`
  /// cleared, when the operation has completed. Implementations that cannot tell return false
  /// until wait() is called; nothing pending returns true.
  virtual bool test(CommRequest& r) { return !r.pending(); }

  const CommStats& stats() const { return stats_; }
  void reset_stats() { stats_ = CommStats{}; }

 protected:
  CommStats stats_;  // implementations add to it
};

}  // namespace meshplan::exec
