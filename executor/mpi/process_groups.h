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
  /// Context parallelism: the grid's DP dimension holds dp*cp ranks, cp varying fastest
  /// (Megatron's order tp-cp-dp-pp); `cp` is the sub-group of the DP group that shares a data
  /// shard (null when cp == 1). Gradients are reduced over the whole DP group (DP x CP).
  std::unique_ptr<Communicator> cp;
  int cp_size = 1;
  int cp_rank() const { return coord.dp % cp_size; }
  int dp_rank() const { return coord.dp / cp_size; }  // the data shard
  /// Expert parallelism (Megatron-Core "MoE parallel folding" with etp = tp = 1): the DP x CP
  /// ranks of the grid's DP dimension re-fold as ep x edp, ep fastest. `ep`: the ranks holding
  /// different experts that exchange tokens (all-to-all); `edp`: the expert-data-parallel group,
  /// the ranks holding the same experts, over which expert gradients are reduced and sharded
  /// (edp = dp*cp/ep). Both null when ep == 1.
  std::unique_ptr<Communicator> ep;
  std::unique_ptr<Communicator> edp;
  int ep_size = 1;
  int ep_rank() const { return coord.dp % ep_size; }
  int edp_rank() const { return coord.dp / ep_size; }

  Communicator& group(GroupKind g) { return g == GroupKind::Tp ? *tp : g == GroupKind::Dp ? *dp : *pp; }
};

/// Collective over the world: every rank calls it with the same grid (grid.world_size() must
/// equal the world size; checked by the caller, asserted here).
ProcessGroups make_process_groups(MpiRuntime& runtime, const RankGrid& grid);

/// Collective over the world: splits the CP groups out of the DP groups (cp divides the grid's
/// DP size). Call after make_process_groups, before the DP group is replaced by a device one.
void add_cp_group(MpiRuntime& runtime, ProcessGroups& groups, int cp);

/// Collective over the world: splits the EP and expert-DP groups out of the DP groups when ep
/// divides the grid's DP size, dp*cp (else leaves none: the trainer refuses that plan). Call after
/// make_process_groups (and add_cp_group), before the DP group is replaced.
void add_ep_groups(ProcessGroups& groups, int ep);

}  // namespace meshplan::exec
