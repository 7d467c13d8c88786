"""docs/cli.md and docs/python_api.md are generated from the typer app and the package's public
names (chateval.cli.reference, chateval.cli.api_reference) and must match them."""

import re
from pathlib import Path

import pytest

import chateval
from chateval.cli.api_reference import api_reference, signature_text
from chateval.cli.reference import cli_reference
from tests.support.helpers import ROOT

REGENERATE = "run: .venv/bin/python scripts/write_reference_docs.py"
PAGES = {"cli.md": cli_reference, "python_api.md": lambda: api_reference(chateval)}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_committed_reference_matches_the_code(page: str) -> None:
    committed = (ROOT / "docs" / page).read_text(encoding="utf-8")
    assert committed == PAGES[page](), REGENERATE


def test_the_terminal_does_not_change_the_pages(monkeypatch: pytest.MonkeyPatch) -> None:
    """A narrow terminal or none (CI, a pipe): the same pages, since nothing is rendered."""
    expected = {page: generate() for page, generate in PAGES.items()}
    for name, value in (("COLUMNS", "40"), ("TERM", "dumb"), ("NO_COLOR", "1"), ("FORCE_COLOR", "1")):
        monkeypatch.setenv(name, value)
    assert {page: generate() for page, generate in PAGES.items()} == expected


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_pages_hold_nothing_of_the_terminal_or_the_machine(page: str) -> None:
    text = PAGES[page]()
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f]", text), "a control character (ANSI, click's \\b)"
    assert not re.search(r"\[/?(bold|italic|dim|red|green|cyan|yellow|blue|magenta)\b", text), "rich markup"
    assert str(ROOT) not in text and str(Path.home()) not in text
    headings = [line for line in text.splitlines() if line.startswith("#")]
    assert not [h for h in headings if "`" in h], "inline code in a heading: the link checker drops it"


def test_every_command_has_a_section_with_its_usage_and_example() -> None:
    text = cli_reference()
    for path in ("chateval", "chateval run", "chateval models prepare", "chateval cache info"):
        assert f"\n## {path}\n\n```text\n{path} [OPTIONS]" in text, path
    assert "| `-o`, `--outdir` | path |  | Run folder (default: runs/NAME). |" in text
    assert "| `--what` | comparisons\\|pairs\\|leaderboard\\|categories | `comparisons` |" in text
    assert "```bash\nchateval cache prune --older-than 2025-01-01\n```" in text
    assert "--html" not in text.split("## chateval report")[1].split("## chateval export")[0]  # hidden


def _example(a: int, /, b: str = "b", *c: int, d: bool | None = None, **e: str) -> list[int]:
    return []


def test_signatures_read_as_the_source_writes_them() -> None:
    assert (
        signature_text("f", _example)
        == "f(a: int, /, b: str = 'b', *c: int, d: bool | None = None, **e: str) -> list[int]"
    )
    wrapped = signature_text("a_name_long_enough_to_write_the_signature_one_parameter_a_line", _example)
    assert wrapped.splitlines()[1:4] == ["    a: int,", "    /,", "    b: str = 'b',"]
