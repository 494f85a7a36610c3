// Communicator::all_to_all_v's default: one isend and one irecv per peer (itself included), so
// every implementation (in-process groups, MPI, NCCL) gets the collective from its p2p calls.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "executor/comm.h"

namespace meshplan::exec {

namespace {
// Tag of the default all-to-all's messages. Below 32767, the smallest MPI_TAG_UB MPI allows; the
// pipeline's tags ((mb * chunks + chunk) * 2 + kind) stay far below it in the groups that use both.
constexpr int kAllToAllTag = 32000;
}  // namespace

void Communicator::all_to_all_v(const float* send, const int64_t* send_counts, float* recv,
                                const int64_t* recv_counts) {
  const int n = size(), me = rank();
  std::vector<CommRequest> requests;
  requests.reserve(static_cast<size_t>(2 * n));
  int64_t recv_at = 0;
  for (int p = 0; p < n; ++p) {
    if (recv_counts[p] > 0) requests.push_back(irecv(recv + recv_at, recv_counts[p], p, kAllToAllTag));
    recv_at += recv_counts[p];
  }
  // Sends in ring order from the right neighbour: no two ranks start on the same peer.
  std::vector<int64_t> send_at(static_cast<size_t>(n) + 1, 0);
  for (int p = 0; p < n; ++p) send_at[p + 1] = send_at[p] + send_counts[p];
  for (int i = 0; i < n; ++i) {
    const int p = (me + i) % n;
    if (send_counts[p] > 0) requests.push_back(isend(send + send_at[p], send_counts[p], p, kAllToAllTag));
  }
  for (CommRequest& r : requests) wait(r);
}

}  // namespace meshplan::exec
