#!/usr/bin/env bash
# Runs the whole test suite (builds first if needed). Same command locally and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
phase() { echo "meshplan: $1 done at $(( $(date +%s) - start )) s"; }  # where CI's time goes (<= 45 min)
bash scripts/install-deps.sh --test  # the suite's own dependencies (a no-op once installed)
phase "test dependencies"
scripts/build.sh
phase "build"
(cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600)
phase "ctest"
scripts/test-fuzz.sh      # libFuzzer targets of every reader, 20 s each (build-fuzz)
phase "fuzzers"
scripts/test-sanitize.sh  # the whole ctest suite again under ASan + UBSan (clang, build-asan)
phase "sanitizer suite"
