"""Tables off a terminal (a log file, CI, a pipe) are laid out wide, not crushed to rich's 80
columns; on any console an id or a name is never cut, and long free text wraps (issue 69)."""

import io

import pytest
from rich.console import Console

from chateval.core.table_console import PLAIN_WIDTH, table_console
from chateval.evaluation.measures import Table
from chateval.reporting.measure_views import print_table

QUESTION = "How does a heat exchanger's steady state change when the flow doubles? " * 3
IDS = ["82:steady-state-flow-a", "82:steady-state-flow-b"]
RUNS = ["systems_categories_long", "systems_categories_other"]
DIFFER = Table("where they differ most", ["item", "question", *RUNS], [[i, QUESTION, "A", "B"] for i in IDS])


def printed(console: Console, table: Table = DIFFER) -> str:
    print_table(console, table)
    assert isinstance(console.file, io.StringIO)
    return console.file.getvalue()


def test_off_a_terminal_a_table_is_wide_and_shows_every_id_and_name_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("COLUMNS", raising=False)
    crushed = printed(Console(file=io.StringIO()))  # rich's own: 80 columns, ids cut alike
    assert "82:steady-state-…" in crushed and IDS[0] not in crushed
    console = table_console(io.StringIO())
    assert console.width == PLAIN_WIDTH
    said = printed(console)
    assert all(word in said for word in [*IDS, *RUNS]) and "…" not in said
    assert max(map(len, said.splitlines())) <= PLAIN_WIDTH  # the question wraps


def test_columns_sets_the_width_and_a_narrow_table_keeps_its_ids_while_text_wraps(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert "systems_categories_lo…" in printed(Console(file=io.StringIO()))  # rich's own layout
    console = table_console(io.StringIO())
    assert console.width == 100
    said = printed(console)
    assert all(word in said for word in [*IDS, *RUNS]) and "…" not in said
    assert max(map(len, said.splitlines())) <= 100
    assert sum("How does" in line for line in said.splitlines()) == 2 * 3  # each repeat on its own line


def test_a_table_whose_words_cannot_fit_folds_them_instead_of_cutting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("COLUMNS", "60")
    said = printed(table_console(io.StringIO()))
    assert "…" not in said and max(map(len, said.splitlines())) <= 60
    joined = "".join(line.split("│")[1].strip() for line in said.splitlines() if line.startswith("│"))
    assert all(i in joined for i in IDS)  # every character, over two lines
