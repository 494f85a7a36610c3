// Rank placement on hosts and the TP-inside-one-host rule.
#include "planner/rank_placement.h"

#include <cassert>
#include <set>

namespace meshplan {

std::vector<RankPlacement> place_ranks(const RankGrid& grid, const std::vector<std::string>& hosts) {
  assert(static_cast<int>(hosts.size()) == grid.world_size());
  std::vector<RankPlacement> out;
  for (int r = 0; r < grid.world_size(); ++r) out.push_back(RankPlacement{r, hosts[r], grid.coords(r)});
  return out;
}

int count_hosts(const std::vector<RankPlacement>& placements) {
  std::set<std::string> hosts;
  for (const RankPlacement& p : placements) hosts.insert(p.host);
  return static_cast<int>(hosts.size());
}

namespace {

std::string join_ints(const std::vector<int>& v) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

}  // namespace

Result<bool> check_tp_within_hosts(const RankGrid& grid, const std::vector<RankPlacement>& placements,
                                   bool allow_tp_across_nodes, const std::string& where) {
  assert(static_cast<int>(placements.size()) == grid.world_size());
  if (allow_tp_across_nodes) return true;
  const std::vector<std::vector<int>> groups = grid.all_groups(GroupKind::Tp);
  for (size_t g = 0; g < groups.size(); ++g) {
    std::string hosts;
    std::set<std::string> distinct;
    for (int r : groups[g]) {
      hosts += (hosts.empty() ? "" : ",") + placements[r].host;
      distinct.insert(placements[r].host);
    }
    if (distinct.size() > 1) {
      return make_error(where, "TP group " + std::to_string(g), "ranks " + join_ints(groups[g]),
                        "spans hosts " + hosts + " (rank order " + grid.order_string() +
                            ": each TP group must be on one host)",
                        "place tp*k consecutive ranks per host, e.g. mpirun --map-by ppr:<ranks per host>:node, "
                        "or pass --allow-tp-across-nodes");
    }
  }
  return true;
}

}  // namespace meshplan
