"""Rewrite docs/config.md and docs/import_config.md from the config models (see
chateval.config.docs).

.venv/bin/python scripts/write_config_docs.py
"""

from pathlib import Path

from chateval.config.docs import write

if __name__ == "__main__":
    for target in write(Path(__file__).resolve().parents[1] / "docs"):
        print(f"wrote {target}")
