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
# cuDNN's fused attention in the CUDA backend needs the header-only cudnn-frontend. It is installed
# from NVIDIA's PyPI wheel (nvidia-cudnn-frontend; not vendored) and only where the CUDA toolkit and
# cuDNN are: its include/ is unpacked into /opt/meshplan-cudnn-frontend, where CMake looks.
FE_VERSION=1.32.0
FE_DIR=/opt/meshplan-cudnn-frontend
if { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; } &&
   { [ -f /usr/local/cuda/include/cudnn.h ] || [ -f /usr/include/cudnn.h ]; } &&
   [ "$(cat "$FE_DIR/VERSION" 2>/dev/null)" != "$FE_VERSION" ]; then
  dpkg-query -W -f='${Status}' python3-pip 2>/dev/null | grep -q "install ok installed" ||
    { $SUDO apt-get update -q && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends python3-pip; }
  fe_tmp=$(mktemp -d)
  if python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$fe_tmp" \
       "nvidia-cudnn-frontend==$FE_VERSION"; then
    $SUDO rm -rf "$FE_DIR" && $SUDO mkdir -p "$FE_DIR"
    $SUDO python3 -c 'import sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])' "$fe_tmp"/nvidia_cudnn_frontend-*.whl "$FE_DIR"
    echo "$FE_VERSION" | $SUDO tee "$FE_DIR/VERSION" >/dev/null
  else
    echo "meshplan: warning: nvidia-cudnn-frontend did not download (the CUDA backend builds without cuDNN attention)"
  fi
  rm -rf "$fe_tmp"
fi
if [ "$WITH_TEST" = 1 ]; then
  bash "$(dirname "$0")/install-framework-validators.sh"
  echo "meshplan: build and test dependencies installed"
else
  echo "meshplan: build dependencies installed (scripts/test.sh adds the test suite's own)"
fi
