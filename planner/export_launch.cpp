// Launch scripts (Slurm, torchrun, mpirun, srun) for one plan, as bash text.
// Sources of the flags and variables (facts, not code):
//   torchrun rendezvous: PyTorch elastic quickstart (--nnodes, --nproc-per-node, --max-restarts,
//     --rdzv-id, --rdzv-backend=c10d, --rdzv-endpoint=host:port) https://pytorch.org/docs/stable/elastic/quickstart
//   NCCL: NCCL_SOCKET_IFNAME prefix lists ("^docker" excludes, "=eth0" exact), NCCL_IB_HCA,
//     NCCL_IB_GID_INDEX, NCCL_IB_DISABLE, NCCL_DEBUG
//     https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html
//   srun --kill-on-bad-exit, --wait; sbatch --time: https://slurm.schedmd.com/srun.html
//   OpenMPI 4.1 mpirun --timeout, --map-by ppr:N:node, oob_tcp_keepalive_* (ompi_info --level 9).
#include "planner/export_launch.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "planner/export.h"

namespace meshplan {

namespace {

std::string str(int64_t v) { return std::to_string(v); }

std::string hms(int64_t seconds) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%02lld:%02lld:%02lld", static_cast<long long>(seconds / 3600),
                static_cast<long long>(seconds / 60 % 60), static_cast<long long>(seconds % 60));
  return buf;
}

std::string plan_line(const Problem& p, const ParallelConfig& c) {
  return p.model.name + " on " + str(p.job.gpus) + " GPUs: tp " + str(c.tp) + ", pp " + str(c.pp) +
         ", dp " + str(c.dp) + ", ZeRO " + str(c.zero_stage) + ", micro-batch " + str(c.micro_batch_size) +
         ", " + to_string(c.schedule) + ", recompute " + to_string(c.recompute);
}

std::string shape_line(const LaunchShape& s) {
  return str(s.nodes) + (s.nodes == 1 ? " node" : " nodes") + " x " + str(s.procs_per_node) +
         (s.procs_per_node == 1 ? " process" : " processes");
}

// The NCCL variables every multi-node GPU launch needs to think about, with their defaults.
std::string nccl_environment() {
  return "# --- Network (NCCL) -------------------------------------------------------------\n"
         "# Interfaces NCCL bootstraps and (without InfiniBand) communicates over: a prefix list,\n"
         "# '^' excludes, '=' matches exactly (e.g. =eth0 or ib0). Default here: all but lo and docker.\n"
         "export NCCL_SOCKET_IFNAME=\"${NCCL_SOCKET_IFNAME:-^lo,docker}\"\n"
         "# InfiniBand / RoCE placeholders: uncomment and set for your fabric.\n"
         "# export NCCL_IB_HCA=mlx5            # HCAs NCCL may use (ibv_devices lists them)\n"
         "# export NCCL_IB_GID_INDEX=3         # RoCE v2: GID index of the routable address (show_gids)\n"
         "# export NCCL_IB_DISABLE=1           # no InfiniBand/RoCE: NCCL uses TCP sockets\n"
         "export NCCL_DEBUG=\"${NCCL_DEBUG:-WARN}\"\n"
         "# A collective stuck on a dead peer or a cut link raises after the process group's timeout\n"
         "# instead of waiting forever (PyTorch >= 2.2 name; older releases: NCCL_ASYNC_ERROR_HANDLING).\n"
         "export TORCH_NCCL_ASYNC_ERROR_HANDLING=1\n";
}

// The tail of the mpirun script: passes mpirun's stderr through and ends mpirun when it cannot
// end the job itself. After a network cut mpirun waits for the daemon of the unreachable host
// until TCP gives up (many minutes; the daemon's ranks are long gone), so once a rank reports a
// lost peer (meshplan's watchdog line) or mpirun reports a failed rank, mpirun gets GRACE_S, then
// SIGKILL (SIGTERM is no use: mpirun is already aborting); JOB_TIMEOUT_S + 60 s is the hard deadline.
const char* const kSupervisor = R"SH(deadline=$((SECONDS + JOB_TIMEOUT_S + 60))
end_at=""
while :; do
  line=""
  if IFS= read -r -t 1 line; then
    printf '%s\n' "$line" >&2
    case "$line" in
      "meshplan: rank "*"made no progress"* | *"exited on signal"* | *"non-zero exit code"* | *"non-zero status"*)
        if [[ -z "$end_at" ]]; then end_at=$((SECONDS + GRACE_S)); fi ;;
    esac
  else
    status=$?
    if ((status <= 128)); then break; fi  # end of mpirun's stderr
    printf '%s' "$line" >&2  # a partial line that arrived before the 1 s read timeout
    # mpirun gone while a process it started (an ssh to a lost host) still holds the pipe open
    if ! kill -0 "$mpirun_pid" 2>/dev/null; then break; fi
  fi
  if { [[ -n "$end_at" ]] && ((SECONDS >= end_at)); } || ((SECONDS >= deadline)); then
    echo "meshplan launch script: mpirun did not end the job; killing it (SIGKILL)" >&2
    kill -KILL "$mpirun_pid" 2>/dev/null || true
    end_at=""
    deadline=$((SECONDS + 3600))
  fi
done <"$fifo"
rc=0
wait "$mpirun_pid" || rc=$?
exit "$rc"
)SH";

std::string framework_args(const LaunchTarget& t) {
  std::string s = "# --- " + t.framework + " arguments (from the plan) ---\n";
  s += t.args_snippet;
  if (!t.args_snippet.empty() && t.args_snippet.back() != '\n') s += "\n";
  return s;
}

std::string entry_line(const LaunchTarget& t) {
  return "\"${ENTRY_POINT:-" + t.entry_point + "}\"" + (t.args_array.empty() ? "" : " \"${" + t.args_array + "[@]}\"");
}

std::string torchrun_line(const LaunchTarget& t, const LaunchShape& s, const std::string& indent) {
  return indent + "torchrun --nnodes=" + str(s.nodes) + " --nproc-per-node=" + str(s.procs_per_node) +
         " --max-restarts=0 \\\n" + indent +
         "  --rdzv-id=\"$RDZV_ID\" --rdzv-backend=c10d --rdzv-endpoint=\"$MASTER_ADDR:$MASTER_PORT\" \\\n" +
         indent + "  " + entry_line(t) + " \"$@\"\n";
}

}  // namespace

LaunchShape launch_shape(const Problem& p) {
  LaunchShape s;
  const int64_t per_node = std::max<int64_t>(1, p.hardware.gpus_per_node);
  s.procs_per_node = std::min<int64_t>(std::max<int64_t>(1, p.job.gpus), per_node);
  s.nodes = (std::max<int64_t>(1, p.job.gpus) + per_node - 1) / per_node;
  return s;
}

LaunchTarget megatron_target(const Problem& p, const ParallelConfig& c) {
  return LaunchTarget{"megatron", "pretrain_gpt.py", megatron_args(p, c), "MEGATRON_ARGS"};
}

std::string slurm_torchrun_script(const Problem& p, const ParallelConfig& c, const LaunchTarget& t,
                                  const LaunchShape& s) {
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n"
    << "#SBATCH --job-name=meshplan-" << p.model.name << "\n"
    << "#SBATCH --nodes=" << s.nodes << "\n"
    << "#SBATCH --ntasks-per-node=1\n"
    << "#SBATCH --gpus-per-node=" << s.procs_per_node << "\n"
    << "#SBATCH --time=" << hms(s.time_limit_s) << "\n"
    << "# " << t.framework << " via torchrun under Slurm: " << plan_line(p, c) << "\n"
    << "# " << shape_line(s) << " per node (one srun task per node starts torchrun, which starts the\n"
    << "# per-GPU processes). Generated by meshplan --export slurm; submit with: sbatch <this file>\n"
    << "# Bounds: Slurm ends the job at --time; srun --kill-on-bad-exit=1 ends every node's task when\n"
    << "# one fails and --wait=60 when one ends; torchrun --max-restarts=0 fails instead of retrying;\n"
    << "# `timeout` ends a node whose torchrun outlives the time limit.\n"
    << "# Environment: ENTRY_POINT [" << t.entry_point << "], MASTER_PORT [29500]. Extra arguments of\n"
    << "# this script are appended to the " << t.framework << " arguments.\n"
    << "set -euo pipefail\n\n"
    << nccl_environment() << "\n"
    << "# --- Rendezvous: the first host of the allocation ---\n"
    // sed reads the whole list: `head -n 1` would close the pipe early, and scontrol's SIGPIPE (exit
    // 141) fails the assignment under pipefail whenever it has more to write.
    << "MASTER_ADDR=\"$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | sed -n 1p)\"\n"
    << "MASTER_PORT=\"${MASTER_PORT:-29500}\"\n"
    << "RDZV_ID=\"${SLURM_JOB_ID:-meshplan}\"\n"
    << "export MASTER_ADDR MASTER_PORT RDZV_ID\n\n"
    << framework_args(t) << "\n"
    << "srun --nodes=" << s.nodes << " --ntasks-per-node=1 --kill-on-bad-exit=1 --wait=60 \\\n"
    << "  timeout --kill-after=60 " << s.time_limit_s << " \\\n"
    << torchrun_line(t, s, "  ");
  return o.str();
}

std::string torchrun_script(const Problem& p, const ParallelConfig& c, const LaunchTarget& t,
                            const LaunchShape& s) {
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n"
    << "# " << t.framework << " via torchrun: " << plan_line(p, c) << "\n"
    << "# " << shape_line(s) << " per node. Run this script on EVERY node (e.g. with pdsh or your\n"
    << "# scheduler), with MASTER_ADDR set to the address of one of them (the c10d rendezvous host).\n"
    << "# Generated by meshplan --export torchrun.\n"
    << "# Bounds: `timeout` ends this node's torchrun after JOB_TIMEOUT_S; --max-restarts=0 fails the\n"
    << "# rendezvous instead of waiting for a lost node to come back.\n"
    << "# Environment: MASTER_ADDR (required), MASTER_PORT [29500], RDZV_ID [meshplan],\n"
    << "# JOB_TIMEOUT_S [" << s.time_limit_s << "], ENTRY_POINT [" << t.entry_point << "].\n"
    << "set -euo pipefail\n\n"
    << nccl_environment() << "\n"
    << "MASTER_ADDR=\"${MASTER_ADDR:?set MASTER_ADDR to the rendezvous host (one of the " << s.nodes
    << " nodes)}\"\n"
    << "MASTER_PORT=\"${MASTER_PORT:-29500}\"\n"
    << "RDZV_ID=\"${RDZV_ID:-meshplan}\"\n"
    << "JOB_TIMEOUT_S=\"${JOB_TIMEOUT_S:-" << s.time_limit_s << "}\"\n\n"
    << framework_args(t) << "\n"
    << "timeout --kill-after=60 \"$JOB_TIMEOUT_S\" \\\n"
    << torchrun_line(t, s, "");
  return o.str();
}

std::string mpirun_meshplan_script(const Problem& p, const ParallelConfig& c, const LaunchShape& s) {
  const int64_t world = static_cast<int64_t>(c.tp) * c.pp * c.dp;
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n"
    << "# meshplan run: " << plan_line(p, c) << "\n"
    << "# " << shape_line(s) << " per host, OpenMPI over TCP. Generated by meshplan --export mpirun.\n"
    << "# Needs: the plan file (meshplan plan|estimate ... --format json --output plan.json); a\n"
    << "# hostfile with one line per host, \"<host> slots=" << s.procs_per_node << "\"; meshplan at the same\n"
    << "# path on every host; ssh from this host to the others (OpenMPI's default launch agent).\n"
    << "# --map-by ppr:" << s.procs_per_node << ":node puts consecutive ranks on one host, so every TP group\n"
    << "# (tp " << c.tp << " consecutive ranks) stays on one host; meshplan refuses other placements.\n"
    << "# Bounds: a rank that exits (error, --comm-timeout-s) makes mpirun end the job; when mpirun\n"
    << "# cannot (a cut link: it would wait for the unreachable host's daemon), this script ends it\n"
    << "# GRACE_S after the first failure; mpirun --timeout ends the job at JOB_TIMEOUT_S, and this\n"
    << "# script kills mpirun 60 s later if it has not ended. Short OOB keepalives let idle daemons\n"
    << "# notice a lost peer.\n"
    << "# Environment: PLAN [plan.json], HOSTFILE [hostfile], MESHPLAN [meshplan],\n"
    << "#   RANKS_PER_HOST [" << s.procs_per_node << "] (a multiple of tp " << c.tp << "),\n"
    << "#   NET_IF   interface or CIDR between hosts, e.g. eth0 or 10.1.0.0/16 (btl_tcp_if_include,\n"
    << "#            oob_tcp_if_include) [unset: OpenMPI's default, every interface but loopback]\n"
    << "#   JOB_TIMEOUT_S [" << s.time_limit_s << "], COMM_TIMEOUT_S [" << s.comm_timeout_s << "], GRACE_S [30],\n"
    << "#   MPIRUN_ARGS   extra mpirun flags, e.g. \"--allow-run-as-root\" or \"--mca plm_rsh_agent ...\".\n"
    << "# Extra arguments of this script go to `meshplan run` (e.g. --steps 100 --checkpoint-dir ckpt).\n"
    << "set -euo pipefail\n\n"
    << "PLAN=\"${PLAN:-plan.json}\"\n"
    << "HOSTFILE=\"${HOSTFILE:-hostfile}\"\n"
    << "MESHPLAN=\"${MESHPLAN:-meshplan}\"\n"
    << "JOB_TIMEOUT_S=\"${JOB_TIMEOUT_S:-" << s.time_limit_s << "}\"\n"
    << "COMM_TIMEOUT_S=\"${COMM_TIMEOUT_S:-" << s.comm_timeout_s << "}\"\n"
    << "RANKS_PER_HOST=\"${RANKS_PER_HOST:-" << s.procs_per_node << "}\"\n"
    << "net=()\n"
    << "if [[ -n \"${NET_IF:-}\" ]]; then\n"
    << "  net=(--mca btl_tcp_if_include \"$NET_IF\" --mca oob_tcp_if_include \"$NET_IF\")\n"
    << "fi\n"
    << "read -r -a extra <<<\"${MPIRUN_ARGS:-}\"\n"
    << "GRACE_S=\"${GRACE_S:-30}\"\n\n"
    << "fifo=\"$(mktemp -u /tmp/meshplan-mpirun.XXXXXX)\"\n"
    << "mkfifo \"$fifo\"\n"
    << "trap 'rm -f \"$fifo\"' EXIT\n"
    << "mpirun -np " << world << " --hostfile \"$HOSTFILE\" --map-by \"ppr:$RANKS_PER_HOST:node\" \\\n"
    << "  --mca btl tcp,vader,self \"${net[@]}\" \\\n"
    << "  --mca oob_tcp_keepalive_time 10 --mca oob_tcp_keepalive_intvl 5 --mca oob_tcp_keepalive_probes 3 \\\n"
    << "  --timeout \"$JOB_TIMEOUT_S\" \"${extra[@]}\" \\\n"
    << "  \"$MESHPLAN\" run --plan \"$PLAN\" --comm-timeout-s \"$COMM_TIMEOUT_S\" \"$@\" 2>\"$fifo\" &\n"
    << "mpirun_pid=$!\n"
    << kSupervisor;
  return o.str();
}

std::string srun_meshplan_script(const Problem& p, const ParallelConfig& c, const LaunchShape& s) {
  std::ostringstream o;
  o << "#!/usr/bin/env bash\n"
    << "#SBATCH --job-name=meshplan-run-" << p.model.name << "\n"
    << "#SBATCH --nodes=" << s.nodes << "\n"
    << "#SBATCH --ntasks-per-node=" << s.procs_per_node << "\n"
    << "#SBATCH --gpus-per-node=" << s.procs_per_node << "\n"
    << "#SBATCH --time=" << hms(s.time_limit_s) << "\n"
    << "# meshplan run under Slurm: " << plan_line(p, c) << "\n"
    << "# " << shape_line(s) << " per node; Slurm's block distribution puts consecutive ranks on one\n"
    << "# node, so each TP group stays on one node. Generated by meshplan --export srun.\n"
    << "# Needs: the plan file (PLAN [plan.json]) and meshplan (MESHPLAN [meshplan]) on every node, and\n"
    << "# Slurm with PMIx (srun --mpi=list shows pmix) for meshplan's OpenMPI. BACKEND [cuda]: cpu for CPU\n"
    << "# ranks (then drop the --gpus-per-node line).\n"
    << "# Bounds: --time; srun --kill-on-bad-exit=1 ends every rank when one fails (meshplan exits after\n"
    << "# --comm-timeout-s when a peer or link is lost), --wait=30 when one ends.\n"
    << "set -euo pipefail\n\n"
    << "PLAN=\"${PLAN:-plan.json}\"\n"
    << "MESHPLAN=\"${MESHPLAN:-meshplan}\"\n"
    << "COMM_TIMEOUT_S=\"${COMM_TIMEOUT_S:-" << s.comm_timeout_s << "}\"\n"
    << "# OpenMPI between nodes: the interface (or CIDR) to use, e.g. eth0; unset: every one but lo.\n"
    << "if [[ -n \"${NET_IF:-}\" ]]; then\n"
    << "  export OMPI_MCA_btl_tcp_if_include=\"$NET_IF\"\n"
    << "fi\n"
    << "export OMPI_MCA_btl=tcp,vader,self\n\n"
    << "srun --mpi=pmix --distribution=block --kill-on-bad-exit=1 --wait=30 \\\n"
    << "  \"$MESHPLAN\" run --plan \"$PLAN\" --backend \"${BACKEND:-cuda}\" --comm-timeout-s \"$COMM_TIMEOUT_S\" \"$@\"\n";
  return o.str();
}

}  // namespace meshplan
