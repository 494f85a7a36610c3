// The "ranks" array of the run JSON (meshplan.run/1) from the ranks' placements (the table rank 0
// prints at start is planner/rank_placement.h's host_map_table).
#pragma once
#include <string>
#include <vector>

#include "planner/rank_placement.h"

namespace meshplan::cli {

/// The run JSON text with "ranks": [{rank, host, tp, pp, dp}] appended (key order kept).
std::string add_ranks_to_run_json(const std::string& json_text, const std::vector<RankPlacement>& placements);

}  // namespace meshplan::cli
