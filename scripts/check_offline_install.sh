#!/usr/bin/env bash
# Proves the air-gapped install (CI runs it): build a wheelhouse here, then, in a network
# namespace with no interface but loopback, install from it into a fresh venv and run chateval
# from there: --help, vLLM's import and `chateval check` of the quickstart config (whose models
# scripts/setup.sh prepared in models/).
#
#   bash scripts/check_offline_install.sh [EXTRAS]     # default cpu; needs unshare (util-linux)
set -euo pipefail
cd "$(dirname "$0")/.."
EXTRAS="${1:-cpu}"
WHEELHOUSE=.wheelhouse
VENV=.venv-offline

bash scripts/wheelhouse.sh "$EXTRAS" "$WHEELHOUSE"
rm -rf "$VENV"
# --map-root-user lets a non-root user make the namespace where the kernel allows it.
unshare --net --map-root-user bash -euo pipefail -c '
  source scripts/pins.sh
  python3 - <<PY
import socket
for host in ("pypi.org", "151.101.0.223"):  # by name, and by one of its addresses
    try:
        socket.create_connection((host, 443), timeout=5)
    except OSError as exc:
        print(f"network cut: {host} unreachable ({exc})")
    else:
        raise SystemExit(f"the namespace still reaches {host}: this would prove nothing")
PY
  bash scripts/install_offline.sh "$1" "$2" "$3"
  "$3/bin/chateval" --help >/dev/null
  if has_vllm "$2"; then
    "$3/bin/python" -c "import vllm; print(\"vllm\", vllm.__version__, \"imports offline\")" 2>&1 | tail -n 1
  fi
  "$3/bin/chateval" check configs/quickstart.yaml
' check-offline "$WHEELHOUSE" "$EXTRAS" "$VENV"
echo "offline install proven: chateval-offline[$EXTRAS] installed and checked a config with no network"
