// The "ranks" array of the run JSON.
#include "cli/run_hosts.h"

#include "cli/report_json.h"

namespace meshplan::cli {

std::string add_ranks_to_run_json(const std::string& json_text, const std::vector<RankPlacement>& placements) {
  ojson j = ojson::parse(json_text);
  ojson ranks = ojson::array();
  for (const RankPlacement& p : placements)
    ranks.push_back({{"rank", p.rank}, {"host", p.host}, {"tp", p.coord.tp}, {"pp", p.coord.pp}, {"dp", p.coord.dp}});
  j["ranks"] = ranks;
  return j.dump(2) + "\n";
}

}  // namespace meshplan::cli
