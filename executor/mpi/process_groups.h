// ProcessGroups: this rank's TP, DP and PP communicators, split from the world along a RankGrid.
#pragma once
#include <memory>

#include "executor/comm.h"
#include "planner/rank_grid.h"

namespace meshplan::exec {

class MpiRuntime;

/// The groups one rank belongs to. Inside each group, a member's rank is its grid coordinate
/// along that dimension (tp group rank == coord.tp, pp group rank == pipeline stage, ...).
struct ProcessGroups {
  RankGrid grid;
  RankCoord coord;
  int world_rank = 0;
  Communicator* world = nullptr;  // owned by the runtime
  std::unique_ptr<Communicator> tp;
  std::unique_ptr<Communicator> dp;
  std::unique_ptr<Communicator> pp;

  Communicator& group(GroupKind g) { return g == GroupKind::Tp ? *tp : g == GroupKind::Dp ? *dp : *pp; }
};

/// Collective over the world: every rank calls it with the same grid (grid.world_size() must
/// equal the world size; checked by the caller, asserted here).
ProcessGroups make_process_groups(MpiRuntime& runtime, const RankGrid& grid);

}  // namespace meshplan::exec
