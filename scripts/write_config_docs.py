"""Rewrite docs/config.md from the run config's models (see chateval.config.docs).

.venv/bin/python scripts/write_config_docs.py
"""

from pathlib import Path

from chateval.config.docs import write

if __name__ == "__main__":
    target = Path(__file__).resolve().parents[1] / "docs" / "config.md"
    write(target)
    print(f"wrote {target}")
