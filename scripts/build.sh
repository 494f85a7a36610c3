#!/usr/bin/env bash
# Configures and builds meshplan into ./build (Release-with-debug-info).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
grep "meshplan:" build-configure.log || true
cmake --build build -j"$(nproc)"
