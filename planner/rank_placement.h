// RankPlacement: which host each world rank runs on, with its grid coordinates, and the rule that
// a TP group stays inside one host (its all-reduces run every layer; across hosts they crawl).
#pragma once
#include <string>
#include <vector>

#include "core/error.h"
#include "planner/rank_grid.h"

namespace meshplan {

/// One world rank: its host name (as the rank itself reported it) and its grid position.
struct RankPlacement {
  int rank = 0;
  std::string host;
  RankCoord coord;
};

/// Placements of every rank, indexed by world rank. hosts.size() must equal grid.world_size().
std::vector<RankPlacement> place_ranks(const RankGrid& grid, const std::vector<std::string>& hosts);

/// Number of distinct hosts.
int count_hosts(const std::vector<RankPlacement>& placements);

/// An Error naming the first TP group whose members are on more than one host (its index in
/// all_groups order, its ranks and their hosts), unless `allow_tp_across_nodes`. `where` names
/// the plan file or "command line".
Result<bool> check_tp_within_hosts(const RankGrid& grid, const std::vector<RankPlacement>& placements,
                                   bool allow_tp_across_nodes, const std::string& where);

}  // namespace meshplan
