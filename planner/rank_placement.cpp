// Rank placement on hosts and the TP-inside-one-host rule.
#include "planner/rank_placement.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
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

namespace {

// "0-7,16-23" for a sorted list of distinct integers.
std::string ranges(const std::vector<int>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(sorted[i]) + (j > i ? "-" + std::to_string(sorted[j]) : "");
    i = j + 1;
  }
  return out;
}

std::vector<int> distinct_sorted(std::vector<int> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// One row per host, in order of first appearance: its ranks and the tp/pp/dp coordinates they hold.
std::string per_host_table(const std::vector<RankPlacement>& placements, const std::string& order) {
  std::vector<std::string> hosts;
  for (const RankPlacement& p : placements)
    if (std::find(hosts.begin(), hosts.end(), p.host) == hosts.end()) hosts.push_back(p.host);
  std::string out = "ranks on " + std::to_string(hosts.size()) + " hosts (rank order " + order + ", " +
                    std::to_string(placements.size()) + " ranks, one row per host):\n";
  for (const std::string& h : hosts) {
    std::vector<int> ranks, tp, pp, dp;
    for (const RankPlacement& p : placements) {
      if (p.host != h) continue;
      ranks.push_back(p.rank);
      tp.push_back(p.coord.tp);
      pp.push_back(p.coord.pp);
      dp.push_back(p.coord.dp);
    }
    out += "  " + h + "  ranks " + ranges(ranks) + "  tp " + ranges(distinct_sorted(tp)) + "  pp " +
           ranges(distinct_sorted(pp)) + "  dp " + ranges(distinct_sorted(dp)) + "\n";
  }
  return out;
}

}  // namespace

std::string host_map_table(const std::vector<RankPlacement>& placements, const std::string& order) {
  if (placements.size() > kMaxRankRows) return per_host_table(placements, order);
  size_t width = 4;
  for (const RankPlacement& p : placements) width = std::max(width, p.host.size());
  const int hosts = count_hosts(placements);
  std::string out = "ranks on " + std::to_string(hosts) + (hosts == 1 ? " host" : " hosts") +
                    " (rank order " + order + "):\n";
  char line[512];
  std::snprintf(line, sizeof(line), "  %5s  %-*s  %3s  %3s  %3s\n", "rank", static_cast<int>(width), "host",
                "tp", "pp", "dp");
  out += line;
  for (const RankPlacement& p : placements) {
    std::snprintf(line, sizeof(line), "  %5d  %-*s  %3d  %3d  %3d\n", p.rank, static_cast<int>(width),
                  p.host.c_str(), p.coord.tp, p.coord.pp, p.coord.dp);
    out += line;
  }
  return out;
}

}  // namespace meshplan
