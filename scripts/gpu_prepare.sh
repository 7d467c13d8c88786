#!/usr/bin/env bash
# Prepares what scripts/gpu_bench.py needs on the GPU machine (Python 3.12, no network, at most
# 64 MiB sent per call), in git-ignored folders that the device call carries:
#   .whl/     wheels beyond the machine's image (which has torch, transformers, jinja2, pyyaml,
#             scipy, typer, rich, tqdm, ...): pydantic and outlines with their own needs;
#   .device/  the SmolLM2 tokenizer files (run scripts/setup.sh first) and the FairEval folder.
# The command that installs and runs them there is in docs/performance.md (GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
FAIREVAL=${1:-../shared/datasets/faireval}
PLATFORMS=(--platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    "${PLATFORMS[@]}" -d .whl \
    pydantic==2.14.4 pydantic-core==2.50.5 annotated-types==0.8.0 typing-inspection==0.4.5 \
    typing-extensions==4.16.0 outlines==1.3.3 outlines-core==0.2.14 diskcache==5.6.3 genson==1.4.0 \
    jsonschema==4.26.0 jsonschema-specifications==2025.9.1 referencing==0.37.0 rpds-py==2026.9.1
mkdir -p .device/tokenizer
cp models/smollm2-135m/{tokenizer.json,tokenizer_config.json,chat_template.jinja} .device/tokenizer/
rm -rf .device/faireval && cp -r "$FAIREVAL" .device/faireval
du -sh .whl .device
