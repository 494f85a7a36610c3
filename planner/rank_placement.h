// RankPlacement: which host each world rank runs on, with its grid coordinates; the rule that a
// TP group stays inside one host (its all-reduces run every layer; across hosts they crawl); and
// the host map table `meshplan run` prints at start.
#pragma once
#include <cstddef>
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

/// Up to this many ranks the host map has one row per rank; above, one row per host.
constexpr size_t kMaxRankRows = 64;

/// "ranks on 2 hosts (rank order tp-dp-pp):" then one row per rank: rank, host, tp, pp, dp; for
/// more than kMaxRankRows ranks one row per host: "node001  ranks 0-7  tp 0-7  pp 0  dp 0".
std::string host_map_table(const std::vector<RankPlacement>& placements, const std::string& order);

}  // namespace meshplan
