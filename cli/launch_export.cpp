// Dispatch of the launch-script exports.
#include "cli/launch_export.h"

#include <cassert>

#include "planner/export_frameworks.h"
#include "planner/export_launch.h"

namespace meshplan::cli {

const char* const kLaunchExportKinds = "slurm, torchrun, mpirun, srun";

bool is_launch_export(const std::string& kind) {
  return kind == "slurm" || kind == "torchrun" || kind == "mpirun" || kind == "srun";
}

Result<std::string> launch_export(const std::string& kind, const Problem& p, const ParallelConfig& c) {
  assert(is_launch_export(kind));
  const LaunchShape shape = launch_shape(p);
  if (kind == "slurm" || kind == "torchrun") {
    // These launch Megatron-LM with --export megatron's arguments: refuse what Megatron does not run
    // (ZeRO-2/3, PyTorch's CP exchange, ...) as --export megatron does, instead of writing flags that
    // mean something else.
    if (auto r = check_framework_export("megatron", p, c); !r) return r.error();
    return kind == "slurm" ? slurm_torchrun_script(p, c, megatron_target(p, c), shape)
                           : torchrun_script(p, c, megatron_target(p, c), shape);
  }
  if (kind == "mpirun") return mpirun_meshplan_script(p, c, shape);
  return srun_meshplan_script(p, c, shape);
}

}  // namespace meshplan::cli
