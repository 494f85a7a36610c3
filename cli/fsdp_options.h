// --fsdp-forward-prefetch, --fsdp-backward-prefetch and --fsdp-model-code: PyTorch FSDP1's prefetch settings
// and the model code an FSDP job trains, as flags and as plan-file JSON (core/framework_knobs.h).
#pragma once
#include <string>

#include "cli/report_json.h"
#include "core/error.h"
#include "core/parallel_config.h"

namespace CLI {
class App;
}

namespace meshplan::cli {

struct FsdpOptions {
  std::string forward_prefetch;   // --fsdp-forward-prefetch on|off ("" = the framework's: on)
  std::string backward_prefetch;  // --fsdp-backward-prefetch pre|post|none ("" = the framework's: pre)
  std::string model_code;         // --fsdp-model-code fused|fms ("" = fused element-wise kernels)
};

/// Adds the three flags to `sub`.
void add_fsdp_options(CLI::App* sub, FsdpOptions& o);
/// The flags given on `app`'s command line into the job (needs --framework fsdp); one Error naming the
/// flag otherwise.
Result<bool> apply_fsdp_options(CLI::App* app, const FsdpOptions& o, Job& job);
/// "fsdp_forward_prefetch" / "fsdp_backward_prefetch" / "fsdp_model_code" in a job object where they differ
/// from the framework's defaults (so a default job's JSON is unchanged).
void add_fsdp_job_json(ojson& j, const Job& job);
/// Reads them back from a plan file's job object; the first bad value as an Error naming `at`.<key>.
Result<bool> read_fsdp_job_json(const ojson& j, const std::string& file, const std::string& at, Job& job);

}  // namespace meshplan::cli
