"""docs/config.md is generated from the config models and must match them."""

from chateval.config.docs import config_reference
from tests.support.helpers import ROOT


def test_committed_config_reference_matches_the_code() -> None:
    committed = (ROOT / "docs" / "config.md").read_text(encoding="utf-8")
    assert committed == config_reference(), "run: .venv/bin/python scripts/write_config_docs.py"


def test_every_key_is_described() -> None:
    rows = [line for line in config_reference().splitlines() if line.startswith("| `")]
    assert len(rows) > 60
    assert all(not line.rstrip().endswith("|  |") for line in rows), [r for r in rows if r.endswith("|  |")]
