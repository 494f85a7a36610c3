// Tests of the Megatron rank layout: coordinates, inverse, group member lists, order strings.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>

#include "planner/rank_grid.h"

using namespace meshplan;

TEST_CASE("rank grid: tp-dp-pp matches Megatron's worked example") {
  auto g = make_rank_grid(2, 2, 2, "tp-dp-pp");
  REQUIRE(g.ok());
  CHECK(g->world_size() == 8);
  CHECK(g->coords(5) == RankCoord{1, 0, 1});
  CHECK(g->coords(6) == RankCoord{0, 1, 1});
  using V = std::vector<std::vector<int>>;
  CHECK(g->all_groups(GroupKind::Tp) == V{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
  CHECK(g->all_groups(GroupKind::Dp) == V{{0, 2}, {1, 3}, {4, 6}, {5, 7}});
  CHECK(g->all_groups(GroupKind::Pp) == V{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(g->group(GroupKind::Dp, 7) == std::vector<int>{5, 7});
}

TEST_CASE("rank grid: Megatron's 16-GPU example tp2 pp4 dp2") {
  // Megatron parallel_state docstring: 16 GPUs, tp=2, pp=4 -> dp=2.
  auto g = make_rank_grid(2, 2, 4);
  REQUIRE(g.ok());
  using V = std::vector<std::vector<int>>;
  CHECK(g->all_groups(GroupKind::Tp) ==
        V{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}, {10, 11}, {12, 13}, {14, 15}});
  CHECK(g->all_groups(GroupKind::Pp) == V{{0, 4, 8, 12}, {1, 5, 9, 13}, {2, 6, 10, 14}, {3, 7, 11, 15}});
  CHECK(g->all_groups(GroupKind::Dp) ==
        V{{0, 2}, {1, 3}, {4, 6}, {5, 7}, {8, 10}, {9, 11}, {12, 14}, {13, 15}});
}

TEST_CASE("rank grid: coords and rank_of are inverse for every order") {
  for (const char* order : {"tp-dp-pp", "tp-pp-dp", "dp-tp-pp", "pp-dp-tp", "dp-pp-tp", "pp-tp-dp"}) {
    auto g = make_rank_grid(3, 2, 4, order);
    REQUIRE(g.ok());
    CHECK(g->order_string() == order);
    std::set<std::vector<int>> seen;
    for (int r = 0; r < g->world_size(); ++r) {
      CHECK(g->rank_of(g->coords(r)) == r);
      for (GroupKind k : {GroupKind::Tp, GroupKind::Dp, GroupKind::Pp}) {
        auto members = g->group(k, r);
        CHECK(static_cast<int>(members.size()) == g->size_of(k));
        CHECK(std::count(members.begin(), members.end(), r) == 1);
        // A member's index in the list is its coordinate along k.
        for (size_t i = 0; i < members.size(); ++i) {
          RankCoord c = g->coords(members[i]);
          int along = k == GroupKind::Tp ? c.tp : k == GroupKind::Dp ? c.dp : c.pp;
          CHECK(along == static_cast<int>(i));
        }
      }
    }
    // Groups of one kind partition the world.
    for (GroupKind k : {GroupKind::Tp, GroupKind::Dp, GroupKind::Pp}) {
      std::vector<int> all;
      for (auto& grp : g->all_groups(k)) all.insert(all.end(), grp.begin(), grp.end());
      std::sort(all.begin(), all.end());
      for (int r = 0; r < g->world_size(); ++r) CHECK(all[r] == r);
    }
  }
}

TEST_CASE("rank grid: the first dimension of the order is contiguous") {
  auto g = make_rank_grid(4, 2, 1, "tp-dp-pp");
  REQUIRE(g.ok());
  CHECK(g->group(GroupKind::Tp, 5) == std::vector<int>{4, 5, 6, 7});
  auto h = make_rank_grid(4, 2, 1, "dp-tp-pp");
  REQUIRE(h.ok());
  CHECK(h->group(GroupKind::Dp, 5) == std::vector<int>{4, 5});
  CHECK(h->group(GroupKind::Tp, 5) == std::vector<int>{1, 3, 5, 7});
}

TEST_CASE("rank grid: bad order strings and sizes are errors") {
  CHECK_FALSE(make_rank_grid(2, 2, 2, "tp-dp").ok());
  CHECK_FALSE(make_rank_grid(2, 2, 2, "tp-tp-pp").ok());
  CHECK_FALSE(make_rank_grid(2, 2, 2, "tp-cp-pp").ok());
  CHECK_FALSE(make_rank_grid(0, 2, 2).ok());
  auto e = make_rank_grid(2, 2, 2, "tp-xx-pp");
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().field == "order");
}
