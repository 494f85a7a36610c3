#!/usr/bin/env bash
# Installs meshplan's build dependencies from Debian's packages (Debian 12); with --test also what
# the test suite needs (scripts/test.sh passes it): a browser, clang's fuzzer runtime, namespaces,
# the PyTorch oracle and the frameworks' validators. Keeping them apart keeps the README's first
# command (install, build, plan) short on a fresh machine.
# The CUDA toolkit and NCCL are optional and not installed here: CMake uses them when present.
set -euo pipefail
WITH_TEST=0
for arg in "$@"; do
  case "$arg" in
    --test) WITH_TEST=1 ;;
    *) echo "install-deps.sh: unknown argument $arg (use --test for the test suite's dependencies)" >&2; exit 2 ;;
  esac
done
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
PKGS=(build-essential cmake pkg-config git
      libcli11-dev libeigen3-dev nlohmann-json3-dev libyaml-cpp-dev catch2
      libgraphviz-dev graphviz openmpi-bin libopenmpi-dev
      python3 python3-numpy python3-yaml)
if [ "$WITH_TEST" = 1 ]; then
  PKGS+=(chromium fonts-liberation)  # tests/report/test_html_browser.py renders the --html reports headless (fonts are only Recommends)
  PKGS+=(iproute2 util-linux)  # tests/multinode/: ip netns, veth, unshare --uts (two hosts on one machine)
  PKGS+=(clang libclang-rt-14-dev)  # libFuzzer + sanitizer runtimes for scripts/test-fuzz.sh
  # PyTorch on CPU is the external oracle for the executor's gradients (tests skip without it).
  if [ "${MESHPLAN_WITH_TORCH:-1}" = "1" ]; then PKGS+=(python3-torch); fi
fi
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ "$WITH_TEST" = 1 ]; then
  bash "$(dirname "$0")/install-framework-validators.sh"
  echo "meshplan: build and test dependencies installed"
else
  echo "meshplan: build dependencies installed (scripts/test.sh adds the test suite's own)"
fi
