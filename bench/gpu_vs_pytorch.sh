#!/usr/bin/env bash
# meshplan's CUDA executor vs PyTorch (eager and torch.compile) on one GPU, seq 2048, micro-batch 8:
# the 125M, 350M and 1.1B Llama models of issue 13. Prints tokens/s, MFU and peak memory per model
# and the ratios meshplan/eager and meshplan/compile. Needs a GPU: without one (or when the device
# fails `meshplan selftest --backend cuda`) it refuses with one line and exit 2.
#
#   bash bench/gpu_vs_pytorch.sh [--steps 20] [--hardware h100-80gb-sxm] [--python python3] [--keep DIR] [--calibrate]
#   bash bench/gpu_vs_pytorch.sh --table DIR
#
# --keep DIR leaves every run's JSON (meshplan-<model>.json, pytorch.jsonl) in DIR; --table DIR prints
# the table again from such a directory and runs nothing (no GPU needed).
# --calibrate first runs `meshplan calibrate --backend cuda --base HARDWARE` on this GPU (GEMM sweep to
# 8192, a 10 s soak; the node and network come from the base profile) and predicts every run with that
# profile, which is how issue 13 states its prediction targets ("after calibrate"); the table says which
# profile priced the predictions.
# --pytorch-jsonl FILE reuses a pytorch.jsonl kept from an earlier run on the same GPU (PyTorch's
# six runs take minutes; its figures do not change when meshplan does) instead of running PyTorch.
#
# MFU uses pytorch_baseline.py's FLOP count (meshplan's cost model: Megatron counting, 3 x forward)
# and the same bf16 peak for both sides. Peak memory: meshplan's tracked-tensor high-water mark
# (run JSON measured.peak_bytes) vs torch.cuda.max_memory_allocated. Figures measured with it on one
# H100 (2026-11-25) are in bench/README.md.
set -euo pipefail
CALLER_DIR=$PWD
cd "$(dirname "$0")/.."
STEPS=20
HARDWARE=h100-80gb-sxm
KEEP=
TORCH_JSONL=
CALIBRATE=0
TABLE_DIR=
PYTHON=${MESHPLAN_PYTHON:-python3}
MESHPLAN=${MESHPLAN_BIN:-build/cli/meshplan}
while [[ $# -gt 0 ]]; do
  case "$1" in
    --steps) STEPS=$2; shift 2 ;;
    --hardware) HARDWARE=$2; shift 2 ;;
    --python) PYTHON=$2; shift 2 ;;
    --keep) KEEP=$2; shift 2 ;;
    --pytorch-jsonl) TORCH_JSONL=$2; shift 2 ;;
    --calibrate) CALIBRATE=1; shift ;;
    --table) TABLE_DIR=$(cd "$CALLER_DIR" && realpath -m -- "$2"); shift 2 ;;
    *) echo "gpu_vs_pytorch.sh: unknown argument $1 (use --steps N --hardware NAME --python PATH --keep DIR --pytorch-jsonl FILE --calibrate --table DIR)" >&2; exit 2 ;;
  esac
done
# The table from a directory holding meshplan-<model>.json and pytorch.jsonl (a run's, or --keep's).
print_table() {
  for f in "$1/pytorch.jsonl" "$1/meshplan-125m.json" "$1/meshplan-350m.json" "$1/meshplan-1b.json"; do
    [[ -f "$f" ]] || { echo "gpu_vs_pytorch.sh: $f missing (keep a run's files with --keep DIR)" >&2; return 2; }
  done
  "$PYTHON" - "$1" <<'PY'
import json, sys
out = sys.argv[1]
torch_rows = {}
for line in open(f"{out}/pytorch.jsonl"):
    r = json.loads(line)
    torch_rows[(r["model"], r["mode"])] = r
def fmt_tok(x): return f"{x:,.0f}" if x else "-"
print("| model | meshplan tok/s (MFU) | PyTorch eager | torch.compile | vs eager | vs compile | meshplan peak vs eager | step predicted / measured |")
print("|---|---|---|---|---|---|---|---|")
profiles = set()
for m in ("125m", "350m", "1b"):
    mp = json.load(open(f"{out}/meshplan-{m}.json"))
    eager, comp = torch_rows.get((m, "eager"), {}), torch_rows.get((m, "compile"), {})
    ref = eager if "tokens_per_s" in eager else comp
    flops_per_token = ref["model_tflops_per_s"] * 1e12 / ref["tokens_per_s"] if "tokens_per_s" in ref else 0
    peak = ref["model_tflops_per_s"] * 1e12 / ref["mfu"] if ref.get("mfu") else 0
    if "measured" not in mp:  # the run JSON's "error" key is its prediction error, not a failure
        print(f"| {m} | {mp.get('run_failed', 'no measurement')} | | | | | | |")
        continue
    tok = mp["measured"]["tokens_per_s"]
    mfu = f" ({100 * tok * flops_per_token / peak:.1f} %)" if peak else ""
    def cell(r):
        if "tokens_per_s" not in r: return r.get("error", "-")
        return f"{fmt_tok(r['tokens_per_s'])} ({100 * r['mfu']:.1f} %)" if r.get("mfu") else fmt_tok(r["tokens_per_s"])
    def ratio(r): return f"{tok / r['tokens_per_s']:.2f}x" if "tokens_per_s" in r else "-"
    mem = mp["measured"].get("device_peak_bytes", mp["measured"]["peak_bytes"])
    emem = f"{eager['peak_memory_bytes'] / 1e9:.1f} GB" if eager.get("peak_memory_bytes") else "-"
    print(f"| {m} | {fmt_tok(tok)}{mfu} | {cell(eager)} | {cell(comp)} | {ratio(eager)} | {ratio(comp)} | "
          f"{mem / 1e9:.1f} vs {emem} | {mp['predicted']['step_s']:.3f} / {mp['measured']['step_s']:.3f} s |")
    profiles.add(f"{mp['predicted'].get('profile', '?')} ({mp['predicted'].get('profile_kind', '?')})")
print("Predictions priced with hardware profile " + ", ".join(sorted(profiles)) + ".")
PY
}
if [[ -n "$TABLE_DIR" ]]; then
  print_table "$TABLE_DIR"
  exit $?
fi
[[ -x "$MESHPLAN" ]] || { echo "gpu_vs_pytorch.sh: $MESHPLAN not built (bash scripts/build.sh)" >&2; exit 2; }
if ! selftest_out=$("$MESHPLAN" selftest --backend cuda 2>&1); then
  echo "gpu_vs_pytorch.sh: not run: $(printf '%s\n' "$selftest_out" | tail -n 1)" >&2
  exit 2
fi
"$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' 2>/dev/null ||
  { echo "gpu_vs_pytorch.sh: not run: $PYTHON has no torch with CUDA" >&2; exit 2; }

if [[ -n "${KEEP:-}" ]]; then
  OUT=$KEEP; mkdir -p "$OUT"
else
  OUT=$(mktemp -d); trap 'rm -rf "$OUT"' EXIT
fi
SEQ=2048
MB=8
if [[ $CALIBRATE == 1 ]]; then
  echo "meshplan calibrate --backend cuda --base $HARDWARE ..." >&2
  "$MESHPLAN" calibrate --backend cuda --base "$HARDWARE" --soak-s 10 --no-selftest \
    --output "$OUT/calibrated.yaml" > "$OUT/calibrate.txt" ||
    { echo "gpu_vs_pytorch.sh: calibrate failed (exit $?); see $OUT/calibrate.txt" >&2; exit 1; }
  HARDWARE=$OUT/calibrated.yaml
fi
declare -A MODEL_FILE=([125m]=bench/models/llama-125m.yaml [350m]=bench/models/llama-350m.yaml
                       [1b]=examples/models/tinyllama-1.1b.yaml)
for m in 125m 350m 1b; do
  echo "meshplan run --backend cuda: $m ..." >&2
  "$MESHPLAN" run --backend cuda --model "${MODEL_FILE[$m]}" --hardware "$HARDWARE" --gpus 1 \
    --global-batch "$MB" --micro-batch "$MB" --seq "$SEQ" --steps "$STEPS" --format json \
    --output "$OUT/meshplan-$m.json" || echo "{\"run_failed\": \"meshplan run failed (exit $?)\"}" > "$OUT/meshplan-$m.json"
done
if [[ -n "$TORCH_JSONL" ]]; then
  echo "PyTorch: figures from $TORCH_JSONL" >&2
  [[ "$TORCH_JSONL" -ef "$OUT/pytorch.jsonl" ]] || cp "$TORCH_JSONL" "$OUT/pytorch.jsonl"
else
  echo "PyTorch eager and torch.compile ..." >&2
  "$PYTHON" bench/pytorch_baseline.py --models 125m,350m,1b --modes eager,compile --seq "$SEQ" \
    --micro-batch "$MB" --steps "$STEPS" --json "$OUT/pytorch.jsonl" > /dev/null
fi

print_table "$OUT"
