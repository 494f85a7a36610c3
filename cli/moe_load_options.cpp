// The routed-expert load: flags, job JSON and plan-file reading (cli/moe_load_options.h).
#include "cli/moe_load_options.h"

#include <CLI/CLI.hpp>

namespace meshplan::cli {

void add_moe_load_options(CLI::App* sub, MoeLoadOptions& o) {
  sub->add_option("--moe-imbalance", o.imbalance,
                  "Routed-expert load of a MoE model: the busiest expert's tokens over the mean, as measured (Megatron-"
                  "Core logs the per-expert token counts): its GPU's expert GEMMs, activation, permutations and "
                  "all-to-all grow by it; 1 = balanced, what forced load balancing "
                  "(--moe-router-force-load-balancing) runs and what natural routing only approaches (default 1)");
  sub->add_option("--moe-capacity-factor", o.capacity_factor,
                  "Megatron-Core's --moe-expert-capacity-factor: tokens above capacity x the mean are dropped, so "
                  "the costed load is min(--moe-imbalance, max(1, factor)); 0 = dropless (default 0); the megatron "
                  "export writes it");
}

void apply_moe_load_options(CLI::App* app, const MoeLoadOptions& o, Job& job) {
  if (!app) return;
  if (app->count("--moe-imbalance") > 0) job.moe_imbalance = o.imbalance;
  if (app->count("--moe-capacity-factor") > 0) job.moe_capacity_factor = o.capacity_factor;
}

void add_moe_load_json(ojson& j, const Job& job) {
  if (job.moe_imbalance != 1.0) j["moe_imbalance"] = job.moe_imbalance;
  if (job.moe_capacity_factor != 0.0) j["moe_capacity_factor"] = job.moe_capacity_factor;
}

Result<bool> read_moe_load_json(const ojson& j, const std::string& file, const std::string& at, Job& job) {
  if (!j.is_object()) return true;
  for (auto [key, out] : {std::pair{"moe_imbalance", &job.moe_imbalance},
                          std::pair{"moe_capacity_factor", &job.moe_capacity_factor}}) {
    if (!j.contains(key)) continue;
    if (!j[key].is_number())
      return make_error(file, at + "." + key, j[key].dump(), "must be a number",
                        "e.g. 1.3 (moe_imbalance) or 1.25 (moe_capacity_factor)");
    *out = j[key].get<double>();
  }
  return true;
}

}  // namespace meshplan::cli
