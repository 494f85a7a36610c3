// The host map `meshplan run` prints at start (planner/rank_placement.h): one row per rank, one
// row per host for large worlds.
#include <catch2/catch.hpp>

#include <algorithm>

#include "planner/rank_placement.h"

using namespace meshplan;

TEST_CASE("host map: one row per rank with host and tp/pp/dp") {
  auto g = make_rank_grid(2, 1, 2, "tp-dp-pp");
  REQUIRE(g.ok());
  const std::string t = host_map_table(place_ranks(*g, {"nodea", "nodea", "nodeb", "nodeb"}), "tp-dp-pp");
  CHECK(t ==
        "ranks on 2 hosts (rank order tp-dp-pp):\n"
        "   rank  host    tp   pp   dp\n"
        "      0  nodea    0    0    0\n"
        "      1  nodea    1    0    0\n"
        "      2  nodeb    0    1    0\n"
        "      3  nodeb    1    1    0\n");
}

TEST_CASE("host map: one row per host above 64 ranks") {
  auto g = make_rank_grid(8, 4, 4, "tp-dp-pp");  // 128 ranks, 8 per host
  REQUIRE(g.ok());
  std::vector<std::string> hosts;
  for (int r = 0; r < 128; ++r) hosts.push_back("node" + std::to_string(100 + r / 8));
  const std::string t = host_map_table(place_ranks(*g, hosts), "tp-dp-pp");
  CHECK(t.rfind("ranks on 16 hosts (rank order tp-dp-pp, 128 ranks, one row per host):\n", 0) == 0);
  CHECK(t.find("  node100  ranks 0-7  tp 0-7  pp 0  dp 0\n") != std::string::npos);
  CHECK(t.find("  node115  ranks 120-127  tp 0-7  pp 3  dp 3\n") != std::string::npos);
  CHECK(std::count(t.begin(), t.end(), '\n') == 17);
}
