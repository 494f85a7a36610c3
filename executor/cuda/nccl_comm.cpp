// NcclCommunicator: NCCL communicators and streams of one group, ids broadcast over the MPI group,
// event ordering against the backend's compute stream, device-time statistics.
#include "executor/cuda/nccl_comm.h"

#include <cassert>
#include <set>
#include <utility>

#include "executor/cuda/cuda_backend.h"
#include "executor/cuda/cuda_check.h"

namespace meshplan::exec {

namespace {

cudaStream_t make_comm_stream() {
  // Highest priority: a communication kernel waiting to start delays every rank of the group.
  int least = 0, greatest = 0;
  CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  cudaStream_t s = nullptr;
  CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, greatest));
  return s;
}

ncclRedOp_t nccl_op(ReduceOp op) { return op == ReduceOp::Max ? ncclMax : ncclSum; }

// Ring neighbours of `r` in a group of `size` (excluding r itself), ascending.
std::set<int> neighbours(int r, int size) {
  std::set<int> out;
  if (size < 2) return out;
  out.insert((r + 1) % size);
  out.insert((r - 1 + size) % size);
  return out;
}

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& host_group, std::unique_ptr<Communicator> owned,
                                   CudaBackend& backend, std::string name, bool p2p)
    : owned_(std::move(owned)), host_(&host_group), backend_(backend), name_(std::move(name)) {
  assert(owned_ == nullptr || owned_.get() == host_);
  rank_ = host_->rank();
  size_ = host_->size();
  CUDA_CHECK(cudaSetDevice(backend_.device()));
  ncclUniqueId id{};
  if (rank_ == 0) NCCL_CHECK(ncclGetUniqueId(&id));
  host_->broadcast_bytes(&id, sizeof(id), 0);
  NCCL_CHECK(ncclCommInitRank(&coll_.comm, size_, id, rank_));
  coll_.stream = make_comm_stream();
  CUDA_CHECK(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming));
  if (p2p) init_pairs();
}

// One 2-rank communicator per ordered neighbour pair (s -> d), in the same order everywhere: a
// rank's initialisations are a subsequence of one global sequence, so the blocking
// ncclCommInitRank calls cannot wait on each other in a cycle.
void NcclCommunicator::init_pairs() {
  std::vector<std::pair<int, int>> pairs;
  for (int s = 0; s < size_; ++s)
    for (int d : neighbours(s, size_)) pairs.emplace_back(s, d);
  if (pairs.empty()) return;
  std::vector<ncclUniqueId> ids(pairs.size());
  if (rank_ == 0)
    for (auto& id : ids) NCCL_CHECK(ncclGetUniqueId(&id));
  host_->broadcast_bytes(ids.data(), ids.size() * sizeof(ncclUniqueId), 0);
  for (size_t i = 0; i < pairs.size(); ++i) {
    const auto [s, d] = pairs[i];
    if (rank_ != s && rank_ != d) continue;
    Channel ch;
    NCCL_CHECK(ncclCommInitRank(&ch.comm, 2, ids[i], rank_ == s ? 0 : 1));
    ch.stream = make_comm_stream();
    (rank_ == s ? send_to_[d] : recv_from_[s]) = ch;
  }
}

NcclCommunicator::~NcclCommunicator() {
  // Teardown must not throw; a failing device here has already been reported.
  auto drop = [](Channel& ch) {
    if (ch.stream != nullptr) cudaStreamSynchronize(ch.stream);
    if (ch.comm != nullptr) ncclCommDestroy(ch.comm);
    if (ch.stream != nullptr) cudaStreamDestroy(ch.stream);
  };
  drop(coll_);
  for (auto& [peer, ch] : send_to_) drop(ch);
  for (auto& [peer, ch] : recv_from_) drop(ch);
  for (auto& [id, t] : pending_) {
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.stop);
  }
  for (Timed& t : finished_) {
    cudaEventDestroy(t.start);
    cudaEventDestroy(t.stop);
  }
  for (cudaEvent_t e : spare_events_) cudaEventDestroy(e);
  if (ready_ != nullptr) cudaEventDestroy(ready_);
}

cudaEvent_t NcclCommunicator::take_event() {
  if (!spare_events_.empty()) {
    cudaEvent_t e = spare_events_.back();
    spare_events_.pop_back();
    return e;
  }
  cudaEvent_t e = nullptr;
  CUDA_CHECK(cudaEventCreate(&e));
  return e;
}

bool NcclCommunicator::on_device(const void* p) const {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
    cudaGetLastError();
    return false;  // unknown to CUDA: plain host memory
  }
  return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged;
}

void NcclCommunicator::add_host_stats(const CommStats& before) {
  const CommStats& now = host_->stats();
  stats_.bytes += now.bytes - before.bytes;
  stats_.seconds += now.seconds - before.seconds;
  stats_.calls += now.calls - before.calls;
}

// Queues `call(stream)` on the channel's stream after the compute work queued so far; start/stop
// events time it on the device.
template <class F>
CommRequest NcclCommunicator::enqueue(const Channel& ch, uint64_t bytes, F&& call) {
  harvest_timings(false);
  CUDA_CHECK(cudaSetDevice(backend_.device()));
  CUDA_CHECK(cudaEventRecord(ready_, backend_.stream()));
  CUDA_CHECK(cudaStreamWaitEvent(ch.stream, ready_, 0));
  Timed t{take_event(), take_event()};
  CUDA_CHECK(cudaEventRecord(t.start, ch.stream));
  call(ch.stream);
  CUDA_CHECK(cudaEventRecord(t.stop, ch.stream));
  stats_.bytes += bytes;
  stats_.calls += 1;
  const int64_t id = next_id_++;
  pending_.emplace(id, t);
  return CommRequest{id};
}

void NcclCommunicator::wait(CommRequest& r) {
  if (!r.pending()) return;
  auto it = pending_.find(r.id);
  assert(it != pending_.end() && "wait on a request of another communicator");
  // Compute work queued from now on runs after the operation (buffers may be reused or freed).
  CUDA_CHECK(cudaStreamWaitEvent(backend_.stream(), it->second.stop, 0));
  if (host_blocking_) CUDA_CHECK(cudaEventSynchronize(it->second.stop));
  finished_.push_back(it->second);
  pending_.erase(it);
  r.id = -1;
  harvest_timings(false);
}

bool NcclCommunicator::test(CommRequest& r) {
  if (!r.pending()) return true;
  auto it = pending_.find(r.id);
  assert(it != pending_.end());
  const cudaError_t e = cudaEventQuery(it->second.stop);
  if (e == cudaErrorNotReady) return false;
  CUDA_CHECK(e);
  wait(r);
  return true;
}

// Adds the device time of finished operations; `block` waits for each first.
void NcclCommunicator::harvest_timings(bool block) {
  size_t kept = 0;
  for (size_t i = 0; i < finished_.size(); ++i) {
    Timed& t = finished_[i];
    if (block) CUDA_CHECK(cudaEventSynchronize(t.stop));
    const cudaError_t e = cudaEventQuery(t.stop);
    if (e == cudaErrorNotReady) {
      finished_[kept++] = t;
      continue;
    }
    CUDA_CHECK(e);
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, t.start, t.stop));
    stats_.seconds += ms * 1e-3;
    spare_events_.push_back(t.start);
    spare_events_.push_back(t.stop);
  }
  finished_.resize(kept);
}

void NcclCommunicator::synchronize_stats() {
  for (auto& [id, t] : pending_) CUDA_CHECK(cudaEventSynchronize(t.stop));
  harvest_timings(true);
}

const NcclCommunicator::Channel& NcclCommunicator::peer_channel(std::map<int, Channel>& m, int peer,
                                                                const char* what) {
  auto it = m.find(peer);
  if (it == m.end()) {
    device_fail("NCCL", std::string(what) + " with peer " + std::to_string(peer) + " of group '" + name_ +
                    "' (rank " + std::to_string(rank_) + " of " + std::to_string(size_) +
                    "): point-to-point channels exist only between ring neighbours of a group built with p2p",
                what, __FILE__, __LINE__);
  }
  return it->second;
}

// ---- non-blocking ----

CommRequest NcclCommunicator::iall_reduce(float* data, int64_t n, ReduceOp op) {
  if (n <= 0) return {};
  if (!on_device(data)) {
    const CommStats before = host_->stats();
    host_->all_reduce(data, n, op);
    add_host_stats(before);
    return {};
  }
  return enqueue(coll_, static_cast<uint64_t>(n) * 4, [&](cudaStream_t s) {
    NCCL_CHECK(ncclAllReduce(data, data, static_cast<size_t>(n), ncclFloat, nccl_op(op), coll_.comm, s));
  });
}

CommRequest NcclCommunicator::ireduce_scatter_sum(const float* in, float* out, int64_t n) {
  if (n <= 0) return {};
  if (!on_device(out)) {
    const CommStats before = host_->stats();
    host_->reduce_scatter_sum(in, out, n);
    add_host_stats(before);
    return {};
  }
  return enqueue(coll_, static_cast<uint64_t>(n) * size_ * 4, [&](cudaStream_t s) {
    NCCL_CHECK(ncclReduceScatter(in, out, static_cast<size_t>(n), ncclFloat, ncclSum, coll_.comm, s));
  });
}

CommRequest NcclCommunicator::iall_gather(const float* in, float* out, int64_t n) {
  if (n <= 0) return {};
  if (!on_device(out)) {
    const CommStats before = host_->stats();
    host_->all_gather(in, out, n);
    add_host_stats(before);
    return {};
  }
  return enqueue(coll_, static_cast<uint64_t>(n) * size_ * 4, [&](cudaStream_t s) {
    NCCL_CHECK(ncclAllGather(in, out, static_cast<size_t>(n), ncclFloat, coll_.comm, s));
  });
}

// Tags are not sent: NCCL matches a peer's messages in issue order (the pipeline issues each
// direction's sends and receives in schedule order, which is the same on both sides).
CommRequest NcclCommunicator::isend(const float* data, int64_t n, int peer, int /*tag*/) {
  if (n <= 0) return {};
  const Channel& ch = peer_channel(send_to_, peer, "send");
  return enqueue(ch, static_cast<uint64_t>(n) * 4, [&](cudaStream_t s) {
    NCCL_CHECK(ncclSend(data, static_cast<size_t>(n), ncclFloat, 1, ch.comm, s));
  });
}

CommRequest NcclCommunicator::irecv(float* data, int64_t n, int peer, int /*tag*/) {
  if (n <= 0) return {};
  const Channel& ch = peer_channel(recv_from_, peer, "recv");
  return enqueue(ch, static_cast<uint64_t>(n) * 4, [&](cudaStream_t s) {
    NCCL_CHECK(ncclRecv(data, static_cast<size_t>(n), ncclFloat, 0, ch.comm, s));
  });
}

// ---- blocking: the same operations, completed at once ----

void NcclCommunicator::all_reduce(float* data, int64_t n, ReduceOp op) {
  CommRequest r = iall_reduce(data, n, op);
  wait(r);
}
void NcclCommunicator::reduce_scatter_sum(const float* in, float* out, int64_t n) {
  CommRequest r = ireduce_scatter_sum(in, out, n);
  wait(r);
}
void NcclCommunicator::all_gather(const float* in, float* out, int64_t n) {
  CommRequest r = iall_gather(in, out, n);
  wait(r);
}
void NcclCommunicator::send(const float* data, int64_t n, int peer, int tag) {
  CommRequest r = isend(data, n, peer, tag);
  wait(r);
}
void NcclCommunicator::recv(float* data, int64_t n, int peer, int tag) {
  CommRequest r = irecv(data, n, peer, tag);
  wait(r);
}

void NcclCommunicator::broadcast(float* data, int64_t n, int root) {
  if (n <= 0) return;
  if (!on_device(data)) {
    const CommStats before = host_->stats();
    host_->broadcast(data, n, root);
    add_host_stats(before);
    return;
  }
  CommRequest r = enqueue(coll_, static_cast<uint64_t>(n) * 4, [&](cudaStream_t s) {
    NCCL_CHECK(ncclBroadcast(data, data, static_cast<size_t>(n), ncclFloat, root, coll_.comm, s));
  });
  wait(r);
}

void NcclCommunicator::broadcast_bytes(void* data, uint64_t bytes, int root) {
  const CommStats before = host_->stats();
  host_->broadcast_bytes(data, bytes, root);
  add_host_stats(before);
}

void NcclCommunicator::barrier() {
  const CommStats before = host_->stats();
  host_->barrier();
  add_host_stats(before);
}

}  // namespace meshplan::exec
