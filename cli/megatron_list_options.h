// CLI flags and plan-file keys of Megatron-Core's name-list knobs: --recompute-modules
// (core/recompute_modules.h) and --cuda-graphs (core/cuda_graphs.h).
#pragma once
#include <string>

#include "cli/report_json.h"
#include "core/error.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

struct MegatronListOptions {
  std::string recompute_modules;  // --recompute-modules core_attn,moe_act,...
  std::string cuda_graphs;        // --cuda-graphs attn,moe_router,moe_preprocess | full_iteration
};

/// Adds --recompute-modules and --cuda-graphs.
void add_megatron_list_options(CLI::App* sub, MegatronListOptions& o);
/// The flags given on `app` into the job (megatron and nemo only); one Error naming the flag otherwise.
Result<bool> apply_megatron_list_options(const MegatronListOptions& o, CLI::App* app, Job& job);
/// "recompute_modules" and "cuda_graphs" as lists of names, each only when set.
void add_megatron_list_json(ojson& job_json, const Job& job);
/// Reads them back from a plan file's job object; the first bad value as an Error naming `at`.<key>.
Result<bool> read_megatron_list_json(const ojson& j, const std::string& file, const std::string& at, Job& job);

}  // namespace meshplan::cli
