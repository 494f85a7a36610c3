// `--export slurm|torchrun|mpirun|srun` of plan and estimate: which launch script a kind names and
// its text for one configuration (planner/export_launch.h renders them).
#pragma once
#include <string>

#include "core/error.h"
#include "core/parallel_config.h"

namespace meshplan::cli {

/// The launch-script kinds, as listed in --help and error hints: "slurm, torchrun, mpirun, srun".
extern const char* const kLaunchExportKinds;

/// True for slurm, torchrun (the framework's entry point; Megatron-LM's pretrain_gpt.py with the
/// --export megatron arguments), mpirun and srun (`meshplan run` itself).
bool is_launch_export(const std::string& kind);

/// The script for `kind` (is_launch_export(kind) must hold), sized by the plan's GPUs and the
/// hardware's gpus_per_node.
/// slurm and torchrun run Megatron-LM, so a configuration it does not run is refused as `--export
/// megatron` refuses it.
Result<std::string> launch_export(const std::string& kind, const Problem& p, const ParallelConfig& c);

}  // namespace meshplan::cli
