#!/usr/bin/env bash
# bench/gpu_vs_pytorch.sh without a GPU: the table from kept run files (bench/results/h100-2026-11-28)
# carries the ratios, MFU and memory figures bench/README.md quotes; bad arguments and a machine
# without a usable GPU end in one stderr line and exit 2. Usage: test_gpu_vs_pytorch.sh SOURCE MESHPLAN
set -uo pipefail
src=$1 bin=$2
script=$src/bench/gpu_vs_pytorch.sh
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$(MESHPLAN_BIN=$bin bash "$script" --table "$src/bench/results/h100-2026-11-28" 2>"$tmp/err") ||
  fail "--table exited $?: $(cat "$tmp/err")"
for want in "| 125m | 216,016 (19.3 %) | 218,592 (19.5 %)" "| 0.99x | 0.49x | 13.0 vs 16.7 GB | 0.060 / 0.076 s |" \
            "| 350m | 89,048 (23.9 %)" "| 0.98x | 0.53x | 34.4 vs 34.3 GB |" \
            "| 1b | 46,669 (34.5 %) | 45,572 (33.7 %) | 67,981 (50.3 %) | 1.02x | 0.69x | 66.4 vs 63.4 GB | 0.310 / 0.351 s |" \
            "Predictions priced with hardware profile h100-80gb-sxm"; do
  grep -qF -- "$want" <<<"$out" || fail "table lacks '$want':"$'\n'"$out"
done

one_line_exit2() {  # description, then the command
  local what=$1; shift
  "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
  [[ $rc == 2 ]] || fail "$what: exit $rc, want 2 ($(cat "$tmp/err"))"
  [[ $(wc -l <"$tmp/err") == 1 ]] || fail "$what: stderr is not one line: $(cat "$tmp/err")"
}
one_line_exit2 "unknown argument" env MESHPLAN_BIN="$bin" bash "$script" --bogus
one_line_exit2 "--table without files" env MESHPLAN_BIN="$bin" bash "$script" --table "$tmp/none"
if "$bin" selftest --backend cuda >/dev/null 2>&1; then
  echo "a GPU passed the selftest here: the no-GPU refusal is not checked (the benchmark would run)"
else
  one_line_exit2 "no usable GPU" env MESHPLAN_BIN="$bin" bash "$script"
  grep -q "not run:" "$tmp/err" || fail "no-GPU refusal does not say 'not run:': $(cat "$tmp/err")"
fi
echo "ok"
