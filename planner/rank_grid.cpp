// Rank <-> (tp, dp, pp) arithmetic and group member lists for a Megatron-style order string.
#include "planner/rank_grid.h"

#include <algorithm>
#include <cassert>
#include <sstream>

namespace meshplan {

const char* to_string(GroupKind g) {
  switch (g) {
    case GroupKind::Tp: return "tp";
    case GroupKind::Dp: return "dp";
    case GroupKind::Pp: return "pp";
  }
  return "?";
}

static int& coord_ref(RankCoord& c, GroupKind g) {
  return g == GroupKind::Tp ? c.tp : g == GroupKind::Dp ? c.dp : c.pp;
}

static int coord_of(const RankCoord& c, GroupKind g) {
  return g == GroupKind::Tp ? c.tp : g == GroupKind::Dp ? c.dp : c.pp;
}

int RankGrid::size_of(GroupKind g) const {
  return g == GroupKind::Tp ? tp : g == GroupKind::Dp ? dp : pp;
}

RankCoord RankGrid::coords(int rank) const {
  assert(rank >= 0 && rank < world_size());
  RankCoord c;
  for (GroupKind g : order) {
    coord_ref(c, g) = rank % size_of(g);
    rank /= size_of(g);
  }
  return c;
}

int RankGrid::rank_of(const RankCoord& c) const {
  int rank = 0;
  int stride = 1;
  for (GroupKind g : order) {
    assert(coord_of(c, g) >= 0 && coord_of(c, g) < size_of(g));
    rank += coord_of(c, g) * stride;
    stride *= size_of(g);
  }
  return rank;
}

std::vector<int> RankGrid::group(GroupKind g, int rank) const {
  RankCoord c = coords(rank);
  std::vector<int> members;
  members.reserve(size_of(g));
  for (int i = 0; i < size_of(g); ++i) {
    coord_ref(c, g) = i;
    members.push_back(rank_of(c));
  }
  return members;
}

std::vector<std::vector<int>> RankGrid::all_groups(GroupKind g) const {
  std::vector<std::vector<int>> groups;
  for (int r = 0; r < world_size(); ++r) {
    if (coord_of(coords(r), g) == 0) groups.push_back(group(g, r));
  }
  std::sort(groups.begin(), groups.end());
  return groups;
}

std::string RankGrid::order_string() const {
  std::string s;
  for (GroupKind g : order) {
    if (!s.empty()) s += "-";
    s += to_string(g);
  }
  return s;
}

Result<RankGrid> make_rank_grid(int tp, int dp, int pp, const std::string& order) {
  if (tp < 1 || dp < 1 || pp < 1) {
    return make_error("rank grid", "tp,dp,pp",
                      std::to_string(tp) + "," + std::to_string(dp) + "," + std::to_string(pp),
                      "every parallel size must be at least 1");
  }
  RankGrid grid;
  grid.tp = tp;
  grid.dp = dp;
  grid.pp = pp;
  std::stringstream in(order);
  std::string part;
  std::vector<GroupKind> seen;
  while (std::getline(in, part, '-')) {
    if (part == "tp") seen.push_back(GroupKind::Tp);
    else if (part == "dp") seen.push_back(GroupKind::Dp);
    else if (part == "pp") seen.push_back(GroupKind::Pp);
    else seen.clear(), seen.resize(4);  // marks the order invalid below
  }
  bool valid = seen.size() == 3 && std::count(seen.begin(), seen.end(), GroupKind::Tp) == 1 &&
               std::count(seen.begin(), seen.end(), GroupKind::Dp) == 1 &&
               std::count(seen.begin(), seen.end(), GroupKind::Pp) == 1;
  if (!valid) {
    return make_error("rank grid", "order", order, "must name tp, dp and pp once each",
                      "e.g. tp-dp-pp (TP ranks contiguous, Megatron's default)");
  }
  std::copy(seen.begin(), seen.end(), grid.order.begin());
  return grid;
}

}  // namespace meshplan
