"""Rewrite docs/cli.md and docs/python_api.md from the typer app and the package's public names
(see chateval.cli.reference and chateval.cli.api_reference).

.venv/bin/python scripts/write_reference_docs.py            # writes the pages
.venv/bin/python scripts/write_reference_docs.py --check    # exit 1 naming a stale page (CI)
"""

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import chateval
from chateval.cli.api_reference import api_reference
from chateval.cli.reference import cli_reference

DOCS = Path(__file__).resolve().parents[1] / "docs"
PAGES: dict[str, Callable[[], str]] = {
    "cli.md": cli_reference,
    "python_api.md": lambda: api_reference(chateval),
}


def main(check: bool) -> int:
    stale = []
    for name, generate in PAGES.items():
        target, text = DOCS / name, generate()
        current = target.read_text(encoding="utf-8") if target.exists() else None
        if current == text:
            continue
        if check:
            stale.append(f"docs/{name}")
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}")
    if stale:
        print(
            f"stale: {', '.join(stale)}; run: .venv/bin/python scripts/write_reference_docs.py",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Rewrite docs/cli.md and docs/python_api.md.")
    parser.add_argument("--check", action="store_true", help="Write nothing; exit 1 if a page is stale.")
    sys.exit(main(parser.parse_args().check))
