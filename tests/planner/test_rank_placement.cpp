// Rank placement on hosts: the TP-inside-one-host rule and its one-line error.
#include <catch2/catch.hpp>

#include "planner/rank_placement.h"

using namespace meshplan;

namespace {

RankGrid grid(int tp, int dp, int pp) {
  auto g = make_rank_grid(tp, dp, pp, "tp-dp-pp");
  REQUIRE(g.ok());
  return *g;
}

}  // namespace

TEST_CASE("placement: coordinates and hosts per rank") {
  const RankGrid g = grid(2, 1, 2);
  const auto placed = place_ranks(g, {"a", "a", "b", "b"});
  REQUIRE(placed.size() == 4);
  CHECK(placed[3].rank == 3);
  CHECK(placed[3].host == "b");
  CHECK(placed[3].coord == RankCoord{1, 0, 1});
  CHECK(count_hosts(placed) == 2);
  CHECK(count_hosts(place_ranks(g, {"a", "a", "a", "a"})) == 1);
}

TEST_CASE("placement: TP groups on one host pass, PP and DP may span hosts") {
  const RankGrid g = grid(2, 2, 2);  // TP {0,1} {2,3} {4,5} {6,7}
  CHECK(check_tp_within_hosts(g, place_ranks(g, {"a", "a", "b", "b", "c", "c", "d", "d"}), false, "p").ok());
  CHECK(check_tp_within_hosts(g, place_ranks(g, {"a", "a", "a", "a", "b", "b", "b", "b"}), false, "p").ok());
}

TEST_CASE("placement: a TP group across hosts is refused in one line naming group, ranks and hosts") {
  const RankGrid g = grid(2, 1, 2);
  const auto round_robin = place_ranks(g, {"nodea", "nodeb", "nodea", "nodeb"});  // mpirun --map-by node
  auto r = check_tp_within_hosts(g, round_robin, false, "plan.json");
  REQUIRE_FALSE(r.ok());
  const std::string line = r.error().one_line();
  CHECK(line.find("plan.json: TP group 0=ranks 0,1: spans hosts nodea,nodeb") == 0);
  CHECK(line.find("--allow-tp-across-nodes") != std::string::npos);
  CHECK(line.find('\n') == std::string::npos);
  // Only the second group split: it is the one named.
  auto second = check_tp_within_hosts(g, place_ranks(g, {"a", "a", "a", "b"}), false, "p");
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().field == "TP group 1");
  CHECK(second.error().value == "ranks 2,3");
  // The flag lifts the rule.
  CHECK(check_tp_within_hosts(g, round_robin, true, "plan.json").ok());
}
