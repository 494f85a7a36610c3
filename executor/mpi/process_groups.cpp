// Splits MPI_COMM_WORLD into the TP, DP and PP groups of a RankGrid (color: the group's first
// member, key: the coordinate along the group), in a fixed order on every rank.
#include "executor/mpi/process_groups.h"

#include <cassert>

#include "executor/mpi/mpi_comm.h"

namespace meshplan::exec {

static std::unique_ptr<Communicator> split_along(MpiRuntime& rt, const RankGrid& grid, GroupKind g) {
  const std::vector<int> members = grid.group(g, rt.world_rank());
  int key = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (members[i] == rt.world_rank()) key = static_cast<int>(i);
  auto comm = rt.world().split(members.front(), key, to_string(g));
  assert(comm->size() == grid.size_of(g) && comm->rank() == key);
  return comm;
}

ProcessGroups make_process_groups(MpiRuntime& runtime, const RankGrid& grid) {
  assert(grid.world_size() == runtime.world_size());
  ProcessGroups groups;
  groups.grid = grid;
  groups.world_rank = runtime.world_rank();
  groups.coord = grid.coords(groups.world_rank);
  groups.world = &runtime.world();
  groups.tp = split_along(runtime, grid, GroupKind::Tp);
  groups.dp = split_along(runtime, grid, GroupKind::Dp);
  groups.pp = split_along(runtime, grid, GroupKind::Pp);
  return groups;
}

void add_cp_group(MpiRuntime& runtime, ProcessGroups& groups, int cp) {
  assert(cp >= 1 && groups.grid.size_of(GroupKind::Dp) % cp == 0);
  groups.cp_size = cp;
  if (cp == 1) return;
  auto* dp = dynamic_cast<MpiCommunicator*>(groups.dp.get());
  assert(dp != nullptr && "add_cp_group before the DP group is replaced");
  (void)runtime;
  groups.cp = dp->split(groups.dp_rank(), groups.cp_rank(), "cp");
}

void add_ep_groups(ProcessGroups& groups, int ep) {
  assert(ep >= 1);
  // An ep that does not divide dp*cp is a user error the trainer reports (validate_executable).
  if (ep == 1 || groups.grid.size_of(GroupKind::Dp) % ep != 0) return;
  groups.ep_size = ep;
  auto* dp = dynamic_cast<MpiCommunicator*>(groups.dp.get());
  assert(dp != nullptr && "add_ep_groups before the DP group is replaced");
  groups.ep = dp->split(groups.edp_rank(), groups.ep_rank(), "ep");
  groups.edp = dp->split(groups.ep_rank(), groups.edp_rank(), "edp");
}

}  // namespace meshplan::exec
