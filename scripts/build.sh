#!/usr/bin/env bash
# Configures and builds meshplan into ./build (Release-with-debug-info): every target, or only the
# targets named as arguments (`bash scripts/build.sh meshplan` builds just the binary).
set -euo pipefail
cd "$(dirname "$0")/.."
# Debug info as line tables (-g1): backtraces and profilers keep file and line; full -g (types, variables)
# made the header-heavy files (CLI11, nlohmann/json, Catch2) 40 % slower to compile (cli/cmd_plan.cpp
# 19.7 s -> 14.1 s, tests/catch_main.cpp 25.4 s -> 16.6 s with GCC 12; 2 cores, 2026-12-02). A debugging
# session wants `cmake -B build -DCMAKE_BUILD_TYPE=Debug` anyway.
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" > build-configure.log 2>&1 || { cat build-configure.log; exit 1; }
grep "meshplan:" build-configure.log || true
cmake --build build -j"$(nproc)" ${1:+--target "$@"}
