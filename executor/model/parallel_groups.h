// EpCpGroups: this rank's place in its expert-parallel and context-parallel groups, the two
// dimensions a model chunk needs besides TP (MoE layers' all-to-all, CP attention's ring).
#pragma once
#include "executor/comm.h"

namespace meshplan::exec {

/// One group; `group` may be null when size == 1.
struct GroupContext {
  int rank = 0;
  int size = 1;
  Communicator* group = nullptr;
  bool active() const { return size > 1; }
};

/// EP: ranks that hold different experts of each MoE layer and exchange tokens by all-to-all
/// (Megatron-Core: carved out of the data-parallel ranks, so they see different tokens).
/// CP: ranks that hold different parts of each sequence (context_parallel.h).
struct EpCpGroups {
  GroupContext ep;
  GroupContext cp;
};

}  // namespace meshplan::exec
