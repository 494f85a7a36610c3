#!/usr/bin/env bash
# Multi-node `meshplan run` on two hosts made of network + UTS namespaces (netns-hosts.sh), OpenMPI
# over TCP. Usage: test-multinode.sh CASE MESHPLAN_BIN, CASE one of:
#   losses     tp2 x pp2 on 4 ranks, 2 per host: the 5 losses equal the 1-rank run (1e-5 relative)
#   hostmap    rank 0 prints every rank's host and tp/pp/dp; the JSON has the same "ranks"
#   tp-across  --map-by node splits TP pairs over both hosts: one error line, exit 2 on every
#              rank; --allow-tp-across-nodes runs it
#   kill       the last rank (on nodeb) SIGKILLs itself at step 2: the job ends within 15 s of step 2
#              with mpirun's message naming the rank, the host and the signal
#   script     the script of `meshplan estimate --export mpirun` runs the plan on both hosts
#   netcut     the same script, link cut after step 3: the job ends within 40 s (comm timeout 8 s,
#              grace 10 s) instead of waiting for TCP to give up
# Exit 0 pass, 1 fail, 4 skip (namespaces unavailable outside CI; netns-hosts.sh fails in CI).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case_name="$1"
bin="$(realpath "$2")"
work="$(mktemp -d /tmp/meshplan-multinode.XXXXXX)"
trap 'rm -rf "$work"' EXIT
cd "$work"

fail() { echo "FAIL ($case_name): $*" >&2; exit 1; }

cat >model.yaml <<'YAML'
name: llama-test8
model_type: llama
hidden_size: 64
num_hidden_layers: 8
num_attention_heads: 8
num_key_value_heads: 4
intermediate_size: 128
vocab_size: 256
max_position_embeddings: 64
tie_word_embeddings: false
YAML

plan() {  # plan NAME GPUS FLAGS...
  local name="$1" gpus="$2"
  shift 2
  "$bin" estimate --model model.yaml --hardware a100-80gb-sxm --gpus "$gpus" --global-batch 16 --seq 16 \
    --micro-batch 1 "$@" --format json --output "$name.json" >/dev/null
}

# Runs "$@" on host nodea of the namespace pair; stdout+stderr in $work/out, exit status in $rc.
on_hosts() {
  rc=0
  bash "$here/netns-hosts.sh" run -- bash -c "$*" >out 2>&1 || rc=$?
  cat out
  if [[ $rc -eq 77 ]] && grep -q "netns-hosts: SKIP" out; then exit 77; fi
}

losses() { grep -o '"loss": [-0-9.e+]*' "$1" | awk '{print $2}'; }

plan tp2pp2 4 --tp 2 --pp 2
mpirun_np4="\$MP_MPIRUN -np 4"
run_plan="$bin run --plan tp2pp2.json --comm-timeout-s 30"

case "$case_name" in
  losses)
    plan one 1
    "$bin" run --plan one.json --steps 5 --format json --output one.run.json >/dev/null 2>&1 || fail "1-rank run"
    on_hosts "$mpirun_np4 --map-by ppr:2:node $run_plan --steps 5 --format json --output multi.run.json"
    [[ $rc -eq 0 ]] || fail "2-host run exited $rc"
    paste <(losses one.run.json) <(losses multi.run.json) >pairs
    [[ $(wc -l <pairs) -eq 5 ]] || fail "expected 5 losses from each run: $(cat pairs)"
    awk '{d = $1 - $2; if (d < 0) d = -d; a = $1 < 0 ? -$1 : $1;
          printf "step %d: 1 rank %s, 2 hosts %s\n", NR - 1, $1, $2; if (d > 1e-5 * a) bad = 1}
         END {exit bad}' pairs || fail "losses differ"
    first=$(head -1 pairs | cut -f1); last=$(tail -1 pairs | cut -f1)
    awk -v a="$first" -v b="$last" 'BEGIN {exit !(b < a)}' || fail "the run did not learn ($first -> $last)"
    grep -q '"host": "nodeb"' multi.run.json || fail "run JSON lacks the ranks on nodeb"
    ;;
  hostmap)
    on_hosts "$mpirun_np4 --map-by ppr:2:node $run_plan --steps 1"
    [[ $rc -eq 0 ]] || fail "run exited $rc"
    grep -q "ranks on 2 hosts (rank order tp-dp-pp):" out || fail "no host map header"
    for row in "0 nodea 0 0 0" "1 nodea 1 0 0" "2 nodeb 0 1 0" "3 nodeb 1 1 0"; do
      grep -Eq "^ +${row// / +}\$" out || fail "host map row '$row' missing"
    done
    ;;
  tp-across)
    start=$(date +%s)
    on_hosts "timeout 60 $mpirun_np4 --map-by node $run_plan --steps 1"
    [[ $rc -eq 2 ]] || fail "expected exit 2 from a TP-spanning placement, got $rc"
    [[ $(grep -c '^meshplan:' out) -eq 1 ]] || fail "expected exactly one meshplan: line"
    grep -q '^meshplan: tp2pp2.json: TP group 0=ranks 0,1: spans hosts nodea,nodeb' out ||
      fail "the error does not name TP group 0, its ranks and hosts"
    echo "refused in $(($(date +%s) - start)) s"
    on_hosts "timeout 60 $mpirun_np4 --map-by node $run_plan --steps 1 --allow-tp-across-nodes"
    [[ $rc -eq 0 ]] || fail "--allow-tp-across-nodes run exited $rc"
    ;;
  kill)
    # Timed from the last progress line before the kill (rank 0 prints "step 2/6" after step
    # index 1; the last rank kills itself during step index 2), so slow start-up does not count.
    bash "$here/netns-hosts.sh" run -- bash -c \
      "timeout 60 $mpirun_np4 --map-by ppr:2:node $run_plan --steps 6 --test-kill-at-step 2" >out 2>&1 &
    pid=$!
    while kill -0 "$pid" 2>/dev/null && ! grep -q "^step 2/6" out; do sleep 0.05; done
    start=$(date +%s.%N)
    rc=0
    wait "$pid" || rc=$?
    took=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN {printf "%.1f", e - s}')
    cat out
    if [[ $rc -eq 77 ]] && grep -q "netns-hosts: SKIP" out; then exit 77; fi
    grep -q "^step 2/6" out || fail "the run did not reach step 2"
    echo "the job ended ${took} s after step 2 with exit $rc"
    [[ $rc -ne 0 && $rc -ne 124 ]] || fail "expected mpirun to end the job with an error (exit $rc)"
    grep -Eq "rank 3 .*on node nodeb.* signal 9" out || fail "no message naming rank 3, nodeb and signal 9"
    awk -v t="$took" 'BEGIN {exit !(t < 15)}' || fail "the job took ${took} s to end"
    ;;
  script|netcut)
    # The launch script of `meshplan estimate --export mpirun`, as a user would run it, with the
    # namespace hosts' launch agent in place of ssh.
    "$bin" estimate --plan tp2pp2.json --export mpirun >run.sh || fail "--export mpirun"
    env_line="PLAN=tp2pp2.json HOSTFILE=\$MP_HOSTFILE NET_IF=\$MP_IF MESHPLAN=$bin RANKS_PER_HOST=2 \
MPIRUN_ARGS=\"--allow-run-as-root --bind-to none --mca plm_rsh_agent \$MP_AGENT\""
    if [[ $case_name == script ]]; then
      on_hosts "$env_line bash run.sh --steps 2"
      [[ $rc -eq 0 ]] || fail "the exported mpirun script exited $rc"
      grep -q "ranks on 2 hosts" out || fail "no host map across 2 hosts"
      grep -q "step 2/2" out || fail "no step 2/2"
    else
      # Cut the link (nodea's end of the veth) after step 2 of a long run: every rank's blocking
      # call times out (COMM_TIMEOUT_S=8); mpirun, which would wait for nodeb's daemon, is ended
      # GRACE_S=10 later by the script: the job must end within 40 s, well before JOB_TIMEOUT_S=120.
      cat >cut.sh <<CUT
$env_line JOB_TIMEOUT_S=120 COMM_TIMEOUT_S=8 GRACE_S=10 bash run.sh --steps 100000 >run.log 2>&1 &
pid=\$!
for i in \$(seq 1 1200); do grep -q "step 3/" run.log && break; sleep 0.1; done
grep -q "step 3/" run.log || { echo "run did not reach step 3"; kill \$pid; exit 3; }
start=\$(date +%s.%N)
ip link set \$MP_IF down
rc=0; wait \$pid || rc=\$?
cat run.log
awk -v s="\$start" -v e="\$(date +%s.%N)" -v rc="\$rc" 'BEGIN {printf "after the cut the job ended in %.1f s, exit %d\n", e - s, rc}'
exit \$rc
CUT
      on_hosts "bash cut.sh"
      took=$(sed -n 's/^after the cut the job ended in \([0-9.]*\) s.*/\1/p' out)
      [[ -n "$took" ]] || fail "the run did not finish its setup"
      [[ $rc -ne 0 ]] || fail "the job exited 0 after a network cut"
      grep -q "made no progress" out || fail "no communication timeout message"
      awk -v t="$took" 'BEGIN {exit !(t < 40)}' || fail "the job took ${took} s to end after the cut"
    fi
    ;;
  *) fail "unknown case" ;;
esac
echo "PASS ($case_name)"
