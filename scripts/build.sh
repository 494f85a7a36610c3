#!/usr/bin/env bash
# Configures and builds meshplan into ./build (Release-with-debug-info): every target, or only the
# targets named as arguments (`bash scripts/build.sh meshplan` builds just the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
grep "meshplan:" build-configure.log || true
cmake --build build -j"$(nproc)" ${1:+--target "$@"}
