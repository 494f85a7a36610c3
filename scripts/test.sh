#!/usr/bin/env bash
# Runs the whole test suite (builds first if needed). Same command locally and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test  # the suite's own dependencies (a no-op once installed)
scripts/build.sh
cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600
../scripts/test-fuzz.sh      # libFuzzer targets of every reader, 20 s each (build-fuzz)
../scripts/test-sanitize.sh  # the whole ctest suite again under ASan + UBSan (clang, build-asan)
