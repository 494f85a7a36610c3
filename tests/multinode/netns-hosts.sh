#!/usr/bin/env bash
# Two "hosts" on this machine for multi-node tests of `meshplan run`: Linux network namespaces
# joined by a veth pair (198.18.0.1/30 and .2/30, the RFC 2544 benchmark-testing range, confined to
# the two namespaces), each command run in its own UTS namespace with the host name nodea/nodeb,
# and an OpenMPI launch agent that enters the namespace of a host instead of ssh.
#
# Usage: netns-hosts.sh run -- COMMAND [ARGS...]
#   Creates the hosts, runs COMMAND on host nodea with these variables set, then removes them
#   (trap on EXIT/INT/TERM, also when COMMAND fails):
#     MP_HOSTFILE   hostfile naming nodea and nodeb with 2 slots each
#     MP_AGENT      launch agent for --mca plm_rsh_agent
#     MP_IF         interface name of the veth inside both hosts (mp0)
#     MP_MPIRUN     "mpirun" plus every flag needed to launch on both hosts over TCP
#   Exit status: COMMAND's; 4 (skip) when namespaces cannot be made outside CI; 1 in CI (CI=true).
# Usage: netns-hosts.sh agent HOST COMMAND...   (what OpenMPI calls in place of `ssh HOST COMMAND`)
set -euo pipefail

readonly IF=mp0
readonly ADDR_A=198.18.0.1/30
readonly ADDR_B=198.18.0.2/30

die_no_namespaces() {
  local why="$1"
  if [[ "${CI:-}" == "true" ]]; then
    echo "netns-hosts: FAIL: cannot create network namespaces ($why); CI must run this test as root with CAP_NET_ADMIN" >&2
    exit 1
  fi
  echo "netns-hosts: SKIP: cannot create network namespaces ($why); run as root to test multi-node runs" >&2
  exit 77
}

# Runs "$@" inside network namespace $1 and a fresh UTS namespace whose host name is $2.
enter_host() {
  local ns="$1" name="$2"
  shift 2
  exec ip netns exec "$ns" unshare --uts -- /bin/sh -c 'hostname "$0" && exec "$@"' "$name" "$@"
}

cmd_agent() {
  # OpenMPI's rsh launcher calls the agent as `agent HOST orted ARGS...` and expects ssh-like
  # behaviour: the words after HOST form one command line for a shell on HOST.
  local host="$1"
  shift
  local ns
  ns="$(sed -n "s/^$host //p" "$(dirname "$0")/hosts.map")"
  [[ -n "$ns" ]] || { echo "netns-hosts agent: unknown host '$host'" >&2; exit 255; }
  enter_host "$ns" "$host" /bin/sh -c "$*"
}

cmd_run() {
  [[ "${1:-}" == "--" ]] && shift
  [[ $# -gt 0 ]] || { echo "usage: netns-hosts.sh run -- COMMAND..." >&2; exit 2; }
  command -v ip >/dev/null || die_no_namespaces "no 'ip' command (iproute2)"
  command -v unshare >/dev/null || die_no_namespaces "no 'unshare' command (util-linux)"
  # Globals: the EXIT trap runs after this function has returned.
  tag="mp$$"
  ns_a="${tag}a"
  ns_b="${tag}b"
  dir="$(mktemp -d /tmp/meshplan-netns.XXXXXX)"
  cleanup() {
    # Whatever still runs on a host (an OpenMPI daemon that lost its link) goes with it.
    local pids
    pids="$( (ip netns pids "$ns_a"; ip netns pids "$ns_b") 2>/dev/null || true)"
    if [[ -n "$pids" ]]; then kill -KILL $pids 2>/dev/null || true; fi
    ip netns del "$ns_a" 2>/dev/null || true
    ip netns del "$ns_b" 2>/dev/null || true
    rm -rf "$dir"
  }
  trap cleanup EXIT
  trap 'exit 130' INT TERM
  ip netns add "$ns_a" 2>"$dir/err" || die_no_namespaces "$(tr '\n' ' ' <"$dir/err")"
  ip netns add "$ns_b"
  # Peers are created directly inside the namespaces: nothing appears in this machine's namespace.
  ip link add "${tag}x" netns "$ns_a" type veth peer name "${tag}y" netns "$ns_b"
  ip -n "$ns_a" link set "${tag}x" name "$IF"
  ip -n "$ns_b" link set "${tag}y" name "$IF"
  ip -n "$ns_a" addr add "$ADDR_A" dev "$IF"
  ip -n "$ns_b" addr add "$ADDR_B" dev "$IF"
  for ns in "$ns_a" "$ns_b"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "$IF" up
  done
  printf 'nodea %s\nnodeb %s\n' "$ns_a" "$ns_b" >"$dir/hosts.map"
  printf 'nodea slots=2\nnodeb slots=2\n' >"$dir/hostfile"
  cp "$0" "$dir/agent"
  chmod +x "$dir/agent"
  # The agent is this script; OpenMPI passes no sub-command, so a tiny wrapper adds "agent".
  printf '#!/bin/sh\nexec /bin/bash "%s/agent" agent "$@"\n' "$dir" >"$dir/launch-agent"
  chmod +x "$dir/launch-agent"
  export MP_HOSTFILE="$dir/hostfile" MP_AGENT="$dir/launch-agent" MP_IF="$IF"
  export MP_MPIRUN="mpirun --allow-run-as-root --hostfile $MP_HOSTFILE --mca plm_rsh_agent $MP_AGENT \
--mca btl tcp,self --mca btl_tcp_if_include $IF --mca oob_tcp_if_include $IF --bind-to none"
  local rc=0
  ( enter_host "$ns_a" nodea "$@" ) || rc=$?
  return "$rc"
}

case "${1:-}" in
  run) shift; cmd_run "$@" ;;
  agent) shift; cmd_agent "$@" ;;
  *) echo "usage: netns-hosts.sh run -- COMMAND... | agent HOST COMMAND..." >&2; exit 2 ;;
esac
