#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan + UBSan) into ./build-fuzz and runs each for
# MESHPLAN_FUZZ_SECONDS (default 20) on its seed corpus (tests/fuzz/seeds, examples, profiles). Any
# crash, sanitizer report, input slower than 5 s or above 2 GB RSS fails.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
seconds="${MESHPLAN_FUZZ_SECONDS:-20}"
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
# -O1 with line tables and without NDEBUG: the readers' asserts stay armed (RelWithDebInfo's own
# "-O2 -g -DNDEBUG" came after these flags until 2026-12-02 and disarmed them). The glue (the harness
# and the cli/ files fuzz_plan links) at -O0: top-level CMakeLists.txt, MESHPLAN_GLUE_COMPILE_OPTIONS.
cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMESHPLAN_WITH_CUDA=OFF -DMESHPLAN_WITH_GRAPHVIZ=OFF \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -gline-tables-only" \
      -DMESHPLAN_GLUE_COMPILE_OPTIONS=-O0 \
      -DMESHPLAN_FUZZ=ON -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
      -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" > build-fuzz-configure.log 2>&1 \
  || { cat build-fuzz-configure.log; exit 1; }
targets=(model hardware plan schedule checkpoint)
cmake --build build-fuzz -j"$(nproc)" --target "${targets[@]/#/fuzz_}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p build-fuzz/artifacts
# One fuzzer per core at a time (each is single-threaded), so CI's 2 cores run the five in 3 x ${seconds} s.
fuzz_one() {
  local t="$1" log="$work/$1.log"
  mkdir -p "$work/$t"
  local seeds=(tests/fuzz/seeds/"$t")
  case "$t" in
    model) seeds+=(examples/models) ;;
    hardware) seeds+=(hardware-profiles) ;;
    schedule) seeds+=(tests/golden/schedules) ;;
  esac
  # New inputs go to $work (the first directory); the shipped seeds are only read.
  if ! build-fuzz/tests/fuzz/fuzz_"$t" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 \
       -max_len=65536 -print_final_stats=1 -artifact_prefix=build-fuzz/artifacts/"$t"- \
       "$work/$t" "${seeds[@]}" > "$log" 2>&1; then
    tail -n 60 "$log"
    echo "meshplan: fuzz_$t found a problem; reproducer in build-fuzz/artifacts/"
    return 1
  fi
  echo "fuzz_$t: $(grep -E '^stat::number_of_executed_units' "$log" | awk '{print $2}') inputs in ${seconds} s, no finding"
}
jobs_at_once=$(nproc)
failed=0
for (( i = 0; i < ${#targets[@]}; i += jobs_at_once )); do
  pids=()
  for t in "${targets[@]:i:jobs_at_once}"; do
    fuzz_one "$t" &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
  [ "$failed" = 0 ] || exit 1
done
echo "meshplan: fuzzers ran ${seconds} s each without a finding, $(( $(date +%s) - start )) s in all"
