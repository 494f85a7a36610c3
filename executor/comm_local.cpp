// In-process communicators: ranks are threads sharing memory; collectives meet at a barrier, read
// each other's buffers, and reduce in rank order so every member gets identical bits.
#include "executor/comm_local.h"

#include <cassert>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <tuple>
#include <vector>

namespace meshplan::exec {

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// State shared by the members of one local group.
struct GroupState {
  explicit GroupState(int n) : size(n), slots(n, nullptr) {}
  int size;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  int64_t generation = 0;
  std::vector<const void*> slots;  // per rank: its input buffer for the current collective
  std::map<std::tuple<int, int, int>, std::deque<std::vector<float>>> mail;  // (src, dst, tag)

  void barrier() {
    std::unique_lock<std::mutex> lock(mu);
    const int64_t gen = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      cv.notify_all();
    } else {
      cv.wait(lock, [&] { return generation != gen; });
    }
  }
};

class LocalCommunicator final : public Communicator {
 public:
  LocalCommunicator(std::shared_ptr<GroupState> g, int rank) : g_(std::move(g)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return g_->size; }

  void all_reduce(float* data, int64_t n, ReduceOp op) override {
    Timer t(*this, n * 4);
    std::vector<float> result(static_cast<size_t>(n));
    post(data);
    for (int64_t i = 0; i < n; ++i) result[i] = input(0)[i];
    for (int r = 1; r < size(); ++r) {
      const float* in = input(r);
      for (int64_t i = 0; i < n; ++i) {
        result[i] = op == ReduceOp::Sum ? result[i] + in[i] : (in[i] > result[i] ? in[i] : result[i]);
      }
    }
    g_->barrier();  // everyone has read every input
    std::memcpy(data, result.data(), static_cast<size_t>(n) * 4);
  }

  void reduce_scatter_sum(const float* in, float* out, int64_t n) override {
    Timer t(*this, size() * n * 4);
    std::vector<float> result(static_cast<size_t>(n), 0.0f);
    post(in);
    for (int r = 0; r < size(); ++r) {
      const float* src = input(r) + rank_ * n;
      for (int64_t i = 0; i < n; ++i) result[i] += src[i];
    }
    g_->barrier();
    std::memcpy(out, result.data(), static_cast<size_t>(n) * 4);
  }

  void all_gather(const float* in, float* out, int64_t n) override {
    Timer t(*this, size() * n * 4);
    std::vector<float> result(static_cast<size_t>(size() * n));
    post(in);
    for (int r = 0; r < size(); ++r) std::memcpy(&result[r * n], input(r), static_cast<size_t>(n) * 4);
    g_->barrier();
    std::memcpy(out, result.data(), result.size() * 4);
  }

  void broadcast(float* data, int64_t n, int root) override {
    Timer t(*this, n * 4);
    broadcast_raw(data, static_cast<uint64_t>(n) * 4, root);
  }
  void broadcast_bytes(void* data, uint64_t bytes, int root) override {
    Timer t(*this, 0);
    broadcast_raw(data, bytes, root);
  }

  void send(const float* data, int64_t n, int peer, int tag) override {
    Timer t(*this, n * 4);
    assert(peer >= 0 && peer < size());
    std::lock_guard<std::mutex> lock(g_->mu);
    g_->mail[{rank_, peer, tag}].emplace_back(data, data + n);
    g_->cv.notify_all();
  }

  void recv(float* data, int64_t n, int peer, int tag) override {
    Timer t(*this, n * 4);
    std::unique_lock<std::mutex> lock(g_->mu);
    auto& box = g_->mail[{peer, rank_, tag}];
    g_->cv.wait(lock, [&] { return !box.empty(); });
    assert(static_cast<int64_t>(box.front().size()) == n && "send/recv size mismatch");
    std::memcpy(data, box.front().data(), static_cast<size_t>(n) * 4);
    box.pop_front();
  }

  void barrier() override {
    Timer t(*this, 0);
    g_->barrier();
  }

  // Collectives complete at the call (every member calls them in the same order); sends are
  // buffered; receives are deferred to wait().
  CommRequest iall_reduce(float* data, int64_t n, ReduceOp op) override {
    all_reduce(data, n, op);
    return done();
  }
  CommRequest ireduce_scatter_sum(const float* in, float* out, int64_t n) override {
    reduce_scatter_sum(in, out, n);
    return done();
  }
  CommRequest iall_gather(const float* in, float* out, int64_t n) override {
    all_gather(in, out, n);
    return done();
  }
  CommRequest isend(const float* data, int64_t n, int peer, int tag) override {
    send(data, n, peer, tag);
    return done();
  }
  CommRequest irecv(float* data, int64_t n, int peer, int tag) override {
    const int64_t id = next_id_++;
    pending_[id] = PendingRecv{data, n, peer, tag};
    return CommRequest{id};
  }
  void wait(CommRequest& r) override {
    if (!r.pending()) return;
    auto it = pending_.find(r.id);
    if (it != pending_.end()) {
      const PendingRecv p = it->second;
      pending_.erase(it);
      recv(p.data, p.n, p.peer, p.tag);
    }
    r = CommRequest{};
  }

 private:
  struct PendingRecv {
    float* data;
    int64_t n;
    int peer;
    int tag;
  };
  // Adds bytes and the wall time of one call to stats_.
  struct Timer {
    Timer(LocalCommunicator& c, int64_t bytes) : c_(c), start_(now_s()) {
      c_.stats_.bytes += static_cast<uint64_t>(bytes);
      ++c_.stats_.calls;
    }
    ~Timer() { c_.stats_.seconds += now_s() - start_; }
    LocalCommunicator& c_;
    double start_;
  };

  void post(const void* in) {
    {
      std::lock_guard<std::mutex> lock(g_->mu);
      g_->slots[rank_] = in;
    }
    g_->barrier();  // every rank's input is posted
  }
  const float* input(int r) const { return static_cast<const float*>(g_->slots[r]); }
  void broadcast_raw(void* data, uint64_t bytes, int root) {
    post(data);
    std::vector<char> copy(static_cast<const char*>(g_->slots[root]),
                           static_cast<const char*>(g_->slots[root]) + bytes);
    g_->barrier();
    if (rank_ != root && bytes > 0) std::memcpy(data, copy.data(), bytes);
  }
  CommRequest done() { return CommRequest{}; }

  std::shared_ptr<GroupState> g_;
  int rank_;
  int64_t next_id_ = 0;
  std::map<int64_t, PendingRecv> pending_;
};

}  // namespace

std::vector<std::unique_ptr<Communicator>> make_local_group(int size) {
  assert(size >= 1);
  auto state = std::make_shared<GroupState>(size);
  std::vector<std::unique_ptr<Communicator>> members;
  for (int r = 0; r < size; ++r) members.push_back(std::make_unique<LocalCommunicator>(state, r));
  return members;
}

std::unique_ptr<Communicator> make_self_communicator() {
  return std::move(make_local_group(1)[0]);
}

void run_local_ranks(int size, const std::function<void(int, Communicator&)>& fn) {
  auto group = make_local_group(size);
  std::vector<std::thread> threads;
  for (int r = 0; r < size; ++r) threads.emplace_back([&, r] { fn(r, *group[r]); });
  for (auto& t : threads) t.join();
}

}  // namespace meshplan::exec
