// --precision-aware-optimizer, --main-params-dtype, --exp-avg-dtype and --exp-avg-sq-dtype: Megatron-Core's
// precision-aware optimizer states as flags and as plan-file JSON (core/optimizer_states.h).
#pragma once
#include <string>

#include "cli/report_json.h"
#include "core/error.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

struct OptimizerStateOptions {
  bool precision_aware = false;      // --precision-aware-optimizer (Megatron-Core --use-precision-aware-optimizer)
  std::string main_params = "fp32";  // --main-params-dtype fp32|fp16
  std::string exp_avg = "fp32";      // --exp-avg-dtype fp32|fp16|bf16|fp8
  std::string exp_avg_sq = "fp32";   // --exp-avg-sq-dtype fp32|fp16|bf16|fp8
};

/// Adds the four flags to `sub`.
void add_optimizer_state_options(CLI::App* sub, OptimizerStateOptions& o);
/// The flags given on `app`'s command line into the job (each needs --framework megatron or nemo; a dtype
/// other than fp32 turns the precision-aware optimizer on); one Error naming the flag otherwise.
Result<bool> apply_optimizer_state_options(CLI::App* app, const OptimizerStateOptions& o, Job& job);
/// "optimizer_states" {"precision_aware", "main_params", "exp_avg", "exp_avg_sq"} in a job object when the
/// precision-aware optimizer is on (a default job's JSON is unchanged).
void add_optimizer_state_json(ojson& j, const Job& job);
/// Reads it back from a plan file's job object; the first bad value as an Error naming `at`.optimizer_states.<key>.
Result<bool> read_optimizer_state_json(const ojson& j, const std::string& file, const std::string& at, Job& job);

}  // namespace meshplan::cli
