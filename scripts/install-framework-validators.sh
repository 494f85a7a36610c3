#!/usr/bin/env bash
# Installs the training frameworks' own config validators that the export tests run (DeepSpeed's
# DeepSpeedConfig) into a venv that sees Debian's CPU torch (python3-torch), so pip never pulls a
# CUDA torch: deepspeed with --no-deps plus only the light modules `import deepspeed` needs.
# A failed download only warns: the validator tests then skip and print why.
set -uo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
VENV="${MESHPLAN_VALIDATORS_VENV:-/opt/meshplan-validators}"
missing=()
for p in python3-venv python3-pip; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
if [ ! -x "$VENV/bin/python" ]; then
  $SUDO /usr/bin/python3 -m venv --system-site-packages "$VENV" || { echo "meshplan: warning: no venv at $VENV"; exit 0; }
fi
$SUDO "$VENV/bin/pip" install -q --disable-pip-version-check \
  packaging tqdm pydantic hjson psutil py-cpuinfo einops msgpack ||
  echo "meshplan: warning: deepspeed's light dependencies did not install (validator tests will skip)"
$SUDO "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps deepspeed==0.19.8 ||
  echo "meshplan: warning: deepspeed did not install (validator tests will skip)"
# Megatron Core's PipelineParallelLayerLayout checks our --pipeline-model-parallel-layout strings
# (0.16.1 is the newest wheel for Python 3.11; it has no megatron/training, so no validate_args).
$SUDO "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps megatron-core==0.16.1 ||
  echo "meshplan: warning: megatron-core did not install (layout validator test will skip)"
echo "meshplan: framework validators in $VENV"
