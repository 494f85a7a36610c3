// In-process communicators: SelfCommunicator (a group of one) and LocalGroup (N ranks as threads
// of one process, sharing memory), so TP/SP code is tested without MPI. Host memory only.
#pragma once
#include <functional>
#include <memory>
#include <vector>

#include "executor/comm.h"

namespace meshplan::exec {

/// size() == 1: collectives copy or do nothing; send/recv to itself are queued in order.
std::unique_ptr<Communicator> make_self_communicator();

/// N communicators that talk through shared memory; member r must be used only by thread r.
/// Reductions add in rank order 0..N-1 on every rank, so all members get identical bits.
std::vector<std::unique_ptr<Communicator>> make_local_group(int size);

/// Runs fn(rank, comm) on `size` threads over one local group and joins them.
void run_local_ranks(int size, const std::function<void(int rank, Communicator& comm)>& fn);

}  // namespace meshplan::exec
