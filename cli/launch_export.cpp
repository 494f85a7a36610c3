// Dispatch of the launch-script exports.
#include "cli/launch_export.h"

#include <cassert>

#include "planner/export_launch.h"

namespace meshplan::cli {

const char* const kLaunchExportKinds = "slurm, torchrun, mpirun, srun";

bool is_launch_export(const std::string& kind) {
  return kind == "slurm" || kind == "torchrun" || kind == "mpirun" || kind == "srun";
}

std::string launch_export(const std::string& kind, const Problem& p, const ParallelConfig& c) {
  assert(is_launch_export(kind));
  const LaunchShape shape = launch_shape(p);
  if (kind == "slurm") return slurm_torchrun_script(p, c, megatron_target(p, c), shape);
  if (kind == "torchrun") return torchrun_script(p, c, megatron_target(p, c), shape);
  if (kind == "mpirun") return mpirun_meshplan_script(p, c, shape);
  return srun_meshplan_script(p, c, shape);
}

}  // namespace meshplan::cli
