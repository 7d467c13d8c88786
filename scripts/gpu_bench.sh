#!/usr/bin/env bash
# The GPU throughput check of docs/performance.md in one command, on a machine with a CUDA GPU:
#
#   bash scripts/gpu_bench.sh [OUT] [gpu_bench.py options]      # default OUT: runs/gpu_bench
#
# It takes chateval from .venv (scripts/setup.sh or scripts/install_offline.sh) or, on a GPU
# image without it, from the wheels scripts/gpu_prepare.sh left in .whl/ (installed to a scratch
# folder); FairEval and the tokenizer from .device/ (gpu_prepare.sh) or their usual places; then
# runs scripts/gpu_bench.py: the first 40 FairEval questions, with and without KV reuse. Later
# options win over these defaults, e.g. --items 80. Without a GPU it stops and says so; a dry run
# on the CPU: bash scripts/gpu_bench.sh OUT --shape tiny --device cpu --items 1
set -euo pipefail
cd "$(dirname "$0")/.."
OUT="${1:-runs/gpu_bench}"
shift || true

PY=python3
if [ -x .venv/bin/python ]; then PY=.venv/bin/python
elif [ -d .whl ]; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/chateval_site .whl/*.whl
  export PYTHONPATH="/tmp/chateval_site:src${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1
if [[ " $* " != *"--device cpu"* && " $* " != *"--device=cpu"* ]] &&
   ! "$PY" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "error: no CUDA GPU here (torch.cuda.is_available() is false); a dry run on the CPU:" \
       "bash scripts/gpu_bench.sh $OUT --shape tiny --device cpu --items 1" >&2
  exit 2
fi
DATA=../shared/datasets/faireval; [ -d .device/faireval ] && DATA=.device/faireval
TOKENIZER=models/smollm2-135m; [ -d .device/tokenizer ] && TOKENIZER=.device/tokenizer
"$PY" scripts/gpu_bench.py --data "$DATA" --tokenizer "$TOKENIZER" --out "$OUT" --items 40 \
    --compare-prefix-cache "$@"
