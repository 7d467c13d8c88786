"""docs/config.md and docs/import_config.md are generated from the config models and must match
them."""

import pytest

from chateval.config.docs import PAGES, config_reference, import_config_reference
from tests.support.helpers import ROOT


@pytest.mark.parametrize("page", sorted(PAGES))
def test_committed_config_reference_matches_the_code(page: str) -> None:
    committed = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert committed == PAGES[page](), "run: .venv/bin/python scripts/write_config_docs.py"


def test_every_key_is_described() -> None:
    text = config_reference() + import_config_reference()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert len(rows) > 60
    assert all(not line.rstrip().endswith("|  |") for line in rows), [r for r in rows if r.endswith("|  |")]
