// --moe-imbalance and --moe-capacity-factor: the routed-expert load a job is costed with, as flags and plan-file JSON (core/moe_load.h).
#pragma once

#include "cli/report_json.h"
#include "core/error.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

struct MoeLoadOptions {
  double imbalance = 1.0;        // --moe-imbalance (busiest expert's tokens / mean; 1 = balanced)
  double capacity_factor = 0.0;  // --moe-capacity-factor (0 = dropless)
};

/// Adds the two flags to `sub`.
void add_moe_load_options(CLI::App* sub, MoeLoadOptions& o);
/// The flags given on `app`'s command line into the job (their ranges are checked with the model,
/// core/moe_load.h validate_moe_load, where the problem is built).
void apply_moe_load_options(CLI::App* app, const MoeLoadOptions& o, Job& job);
/// "moe_imbalance" / "moe_capacity_factor" in a job object where they differ from balanced dropless routing.
void add_moe_load_json(ojson& j, const Job& job);
/// Reads them back from a plan file's job object; a value that is not a number as an Error naming `at`.<key>.
Result<bool> read_moe_load_json(const ojson& j, const std::string& file, const std::string& at, Job& job);

}  // namespace meshplan::cli
