// RankGrid: Megatron-style layout of world ranks on a (tp, dp, pp) grid from an order string.
// Pure data and arithmetic (no MPI): the executor builds its communicators from these member lists.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "core/error.h"

namespace meshplan {

enum class GroupKind { Tp, Dp, Pp };
const char* to_string(GroupKind g);

/// Position of one rank on the grid.
struct RankCoord {
  int tp = 0;
  int dp = 0;
  int pp = 0;
  bool operator==(const RankCoord& o) const { return tp == o.tp && dp == o.dp && pp == o.pp; }
};

/// The order string lists the dimensions fastest-varying first, as Megatron's "tp-cp-ep-dp-pp":
/// with "tp-dp-pp" the TP ranks of one group are contiguous (same node), then DP, then PP.
/// Worked example, tp=2 dp=2 pp=2, order "tp-dp-pp":
///   rank = tp + 2*dp + 4*pp;  TP groups {0,1} {2,3} {4,5} {6,7};  DP groups {0,2} {1,3} {4,6} {5,7};
///   PP groups {0,4} {1,5} {2,6} {3,7}.
struct RankGrid {
  int tp = 1;
  int dp = 1;
  int pp = 1;
  std::array<GroupKind, 3> order{GroupKind::Tp, GroupKind::Dp, GroupKind::Pp};  // fastest first

  int world_size() const { return tp * dp * pp; }
  int size_of(GroupKind g) const;
  /// Coordinates of `rank` (0 <= rank < world_size()).
  RankCoord coords(int rank) const;
  /// Inverse of coords.
  int rank_of(const RankCoord& c) const;
  /// Members of the `g` group containing `rank`, ordered by their coordinate along `g`
  /// (so the index of a member in the list is its rank inside the group).
  std::vector<int> group(GroupKind g, int rank) const;
  /// Every `g` group, ordered by their smallest member.
  std::vector<std::vector<int>> all_groups(GroupKind g) const;
  /// The order string, e.g. "tp-dp-pp".
  std::string order_string() const;
};

/// Builds a grid; the order must name tp, dp and pp once each, separated by '-'. Sizes must be >= 1.
Result<RankGrid> make_rank_grid(int tp, int dp, int pp, const std::string& order = "tp-dp-pp");

}  // namespace meshplan
