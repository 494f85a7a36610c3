// Host map table and the "ranks" array of the run JSON.
#include "cli/run_hosts.h"

#include <algorithm>
#include <cstdio>

#include "cli/report_json.h"

namespace meshplan::cli {

std::string host_map_table(const std::vector<RankPlacement>& placements, const std::string& order) {
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

std::string add_ranks_to_run_json(const std::string& json_text, const std::vector<RankPlacement>& placements) {
  ojson j = ojson::parse(json_text);
  ojson ranks = ojson::array();
  for (const RankPlacement& p : placements)
    ranks.push_back({{"rank", p.rank}, {"host", p.host}, {"tp", p.coord.tp}, {"pp", p.coord.pp}, {"dp", p.coord.dp}});
  j["ranks"] = ranks;
  return j.dump(2) + "\n";
}

}  // namespace meshplan::cli
