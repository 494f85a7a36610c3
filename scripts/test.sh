#!/usr/bin/env bash
# Runs the whole test suite (builds first if needed). Same command locally and in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh --test  # the suite's own dependencies (a no-op once installed)
scripts/build.sh
cd build && ctest --output-on-failure -j"$(nproc)" --timeout 600
# The ASan + UBSan suite (scripts/test-sanitize.sh) is not part of CI yet: on the merged tree its
# build passes but many tests still fail under it (a test's replacement operator new, OpenMPI and
# exit-path leaks); it runs on its own until it is clean.
../scripts/test-fuzz.sh      # libFuzzer targets of every reader, 20 s each (build-fuzz)
