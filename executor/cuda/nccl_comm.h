// NcclCommunicator: the Communicator of one process group on CUDA devices. Collectives run on a
// communication stream of their own (NCCL), ordered after the compute work queued before them and
// before the compute work queued after wait(), so DP gradient buckets and ZeRO-3 prefetches
// overlap the backward/forward kernels. Host-memory buffers (the trainer's loss and norm scalars,
// ids, strings) still go through the MPI group it wraps.
#pragma once
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "executor/comm.h"

namespace meshplan::exec {

class CudaBackend;

class NcclCommunicator final : public Communicator {
 public:
  /// Collective over host_group (kept for host-memory buffers; `owned` is host_group itself when
  /// this communicator takes it over, or null when the caller keeps it alive): rank 0 creates the ncclUniqueId and broadcasts it through
  /// host_group, every member calls ncclCommInitRank. With `p2p`, also one 2-rank communicator
  /// and stream per ordered pair of ring neighbours (r -> r+1, r -> r-1, modulo size), created in
  /// the same global order on every rank: NCCL matches point-to-point messages by issue order, and
  /// a communicator (and stream) per direction keeps a send never queued behind a receive.
  NcclCommunicator(Communicator& host_group, std::unique_ptr<Communicator> owned, CudaBackend& backend,
                   std::string name, bool p2p);
  ~NcclCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  const std::string& name() const { return name_; }
  /// true: blocking calls and wait() also block the host until the operation is done (stats then
  /// count host-visible time too); default false: they only order the compute stream after it.
  void set_host_blocking(bool on) { host_blocking_ = on; }

  void all_reduce(float* data, int64_t n, ReduceOp op) override;
  void reduce_scatter_sum(const float* in, float* out, int64_t n) override;
  void all_gather(const float* in, float* out, int64_t n) override;
  void broadcast(float* data, int64_t n, int root) override;
  void broadcast_bytes(void* data, uint64_t bytes, int root) override;
  void send(const float* data, int64_t n, int peer, int tag) override;
  void recv(float* data, int64_t n, int peer, int tag) override;
  void barrier() override;

  CommRequest iall_reduce(float* data, int64_t n, ReduceOp op) override;
  CommRequest ireduce_scatter_sum(const float* in, float* out, int64_t n) override;
  CommRequest iall_gather(const float* in, float* out, int64_t n) override;
  CommRequest isend(const float* data, int64_t n, int peer, int tag) override;
  CommRequest irecv(float* data, int64_t n, int peer, int tag) override;
  void wait(CommRequest& r) override;
  bool test(CommRequest& r) override;

  /// Waits for every queued operation and adds all their device time to stats().seconds.
  void synchronize_stats();

 private:
  struct Channel {       // one NCCL communicator and the stream its operations run on
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
  };
  struct Timed {         // an operation's start/stop events on its stream
    cudaEvent_t start = nullptr;
    cudaEvent_t stop = nullptr;
  };
  template <class F>
  CommRequest enqueue(const Channel& ch, uint64_t bytes, F&& call);
  bool on_device(const void* p) const;
  const Channel& peer_channel(std::map<int, Channel>& m, int peer, const char* what);
  void add_host_stats(const CommStats& before);
  void harvest_timings(bool block);
  cudaEvent_t take_event();  // a timing event from the spares, or a new one
  void init_pairs();

  std::unique_ptr<Communicator> owned_;
  Communicator* host_ = nullptr;
  CudaBackend& backend_;
  std::string name_;
  int rank_ = 0;
  int size_ = 1;
  bool host_blocking_ = false;
  Channel coll_;
  std::map<int, Channel> send_to_;    // peer -> channel carrying our messages to it
  std::map<int, Channel> recv_from_;  // peer -> channel carrying its messages to us
  cudaEvent_t ready_ = nullptr;       // "compute work queued so far" marker, reused
  std::map<int64_t, Timed> pending_;  // request id -> events
  std::vector<Timed> finished_;       // waited, device time not yet added
  std::vector<cudaEvent_t> spare_events_;
  int64_t next_id_ = 0;
};

}  // namespace meshplan::exec
