// The host map of `meshplan run`: the table rank 0 prints at start and the "ranks" array of the
// run JSON (meshplan.run/1), from the ranks' placements.
#pragma once
#include <string>
#include <vector>

#include "planner/rank_placement.h"

namespace meshplan::cli {

/// "ranks on 2 hosts (order tp-dp-pp):" then one row per rank: rank, host, tp, pp, dp.
std::string host_map_table(const std::vector<RankPlacement>& placements, const std::string& order);

/// The run JSON text with "ranks": [{rank, host, tp, pp, dp}] appended (key order kept).
std::string add_ranks_to_run_json(const std::string& json_text, const std::vector<RankPlacement>& placements);

}  // namespace meshplan::cli
