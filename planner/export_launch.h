// Launch scripts for a plan's node count: Slurm (sbatch + srun + torchrun) and a per-node torchrun
// script for a framework's entry point, and mpirun-with-a-hostfile / srun scripts for
// `meshplan run` itself. Every script bounds the whole job (see each function). Plain bash text,
// deterministic.
#pragma once
#include <cstdint>
#include <string>

#include "core/parallel_config.h"

namespace meshplan {

/// What torchrun starts on every GPU: a framework's entry point and its arguments, given as a bash
/// snippet that defines the array `args_array` (e.g. megatron_args()'s MEGATRON_ARGS=( ... )).
/// Exports of other frameworks plug in by filling this struct.
struct LaunchTarget {
  std::string framework;     // "megatron", ... (named in the script's header)
  std::string entry_point;   // script torchrun runs, e.g. "pretrain_gpt.py"
  std::string args_snippet;  // bash defining args_array; may be empty
  std::string args_array;    // name of the array, e.g. "MEGATRON_ARGS"; empty = no arguments
};

/// How big and how long: nodes x processes per node, and the bounds of the job.
struct LaunchShape {
  int64_t nodes = 1;
  int64_t procs_per_node = 1;        // GPUs (ranks) per node
  int64_t time_limit_s = 4 * 3600;   // whole job (sbatch --time, timeout, mpirun --timeout)
  int64_t comm_timeout_s = 300;      // one blocking collective (meshplan --comm-timeout-s; NCCL)
};

/// Nodes = ceil(gpus / gpus_per_node), procs_per_node = min(gpus, gpus_per_node), default bounds.
LaunchShape launch_shape(const Problem& p);

/// Megatron-LM's pretrain_gpt.py with megatron_args(p, c).
LaunchTarget megatron_target(const Problem& p, const ParallelConfig& c);

/// sbatch script: #SBATCH --nodes/--ntasks-per-node=1/--gpus-per-node/--time, the NCCL
/// environment (NCCL_SOCKET_IFNAME, NCCL_IB_* documented), MASTER_ADDR = first host of the
/// allocation, `srun --kill-on-bad-exit=1 --wait=60 timeout ... torchrun --rdzv-backend=c10d`.
std::string slurm_torchrun_script(const Problem& p, const ParallelConfig& c, const LaunchTarget& t,
                                  const LaunchShape& s);

/// Per-node script (run on every node, e.g. by pdsh): torchrun with a c10d rendezvous at
/// MASTER_ADDR:MASTER_PORT, under `timeout`, --max-restarts=0.
std::string torchrun_script(const Problem& p, const ParallelConfig& c, const LaunchTarget& t,
                            const LaunchShape& s);

/// `meshplan run --plan $PLAN` on every host of $HOSTFILE: mpirun --map-by ppr:G:node (TP groups
/// on one host), OpenMPI over TCP (btl tcp,self; btl/oob_tcp_if_include $NET_IF when set), short
/// OOB keepalives (a cut link ends the daemons), mpirun --timeout, an outer `timeout`, and
/// --comm-timeout-s: after any rank exits, mpirun ends the whole job.
std::string mpirun_meshplan_script(const Problem& p, const ParallelConfig& c, const LaunchShape& s);

/// sbatch script running `meshplan run` with srun (--ntasks-per-node=G, --mpi=pmix,
/// --kill-on-bad-exit=1, --wait, --time).
std::string srun_meshplan_script(const Problem& p, const ParallelConfig& c, const LaunchShape& s);

}  // namespace meshplan
