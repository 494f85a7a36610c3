#!/usr/bin/env bash
# Runs the whole test suite (builds first if needed). Same command locally and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600
