"""`chateval cache`: where the judgment store is and what it holds (a missing store is not
made), and pruning it, with one-line refusals (exit code 2)."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chateval.cli import app
from chateval.store import judgments
from chateval.store.judgments import STORE_FILE, JudgmentStore, StoredDebate

runner = CliRunner()
PANEL_A = "a1" * 32
PANEL_B = "b2" * 32


@pytest.fixture(autouse=True)
def default_store(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """The default store's folder, $CHATEVAL_CACHE, in the test's own folder."""
    monkeypatch.setenv("CHATEVAL_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def filled(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A store with 3 debates of panel A (two from January, one from March) and 1 of panel B."""
    with JudgmentStore(folder) as store:
        for key, panel, when in (
            ("a1", PANEL_A, "2025-01-10T08:30:00+00:00"),
            ("a2", PANEL_A, "2025-01-11T08:30:00+00:00"),
            ("a3", PANEL_A, "2025-03-01T09:00:00+00:00"),
            ("b1", PANEL_B, "2025-03-02T10:00:00+00:00"),
        ):
            monkeypatch.setattr(judgments, "now", lambda when=when: when)
            store.put(StoredDebate(key, panel, [{"text": "fine"}], "/runs/r", "2025-01-10T08:00:00+00:00"))
        store.describe_panel(PANEL_A, "critic + scientist on smollm2-135m")
    return folder


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["cache", *args])
    return result.exit_code, result.output


def test_info_on_a_store_not_made_yet_says_so_and_makes_none(default_store: Path) -> None:
    code, said = invoke("info")
    assert code == 0
    assert f"no judgment store at {default_store / STORE_FILE} yet" in said
    code, said = invoke("info", "--json")
    assert json.loads(said) == {
        "enabled": True,
        "folder": str(default_store),
        "file": str(default_store / STORE_FILE),
        "exists": False,
        "bytes": 0,
        "entries": 0,
        "panels": [],
    }
    assert not default_store.exists()


def test_info_when_the_store_is_off_says_how_to_turn_it_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHATEVAL_CACHE", "off")
    code, said = invoke("info")
    assert code == 0 and "the judgment store is off (CHATEVAL_CACHE=off)" in said and "--cache DIR" in said
    assert json.loads(invoke("info", "--json")[1]) == {"enabled": False}


def test_info_on_a_filled_store(default_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    filled(default_store, monkeypatch)
    code, said = invoke("info")
    assert code == 0, said
    lines = [" ".join(line.split()) for line in said.splitlines()]  # the columns' widths aside
    assert lines == [
        f"judgment store: {default_store / STORE_FILE}",
        lines[1],
        "panel debates oldest (UTC) newest (UTC) description",
        "a1a1a1a1a1a1 3 2025-01-10 08:30 2025-03-01 09:00 critic + scientist on smollm2-135m",
        "b2b2b2b2b2b2 1 2025-03-02 10:00 2025-03-02 10:00 -",
    ]
    assert lines[1].startswith("size on disk: ") and lines[1].endswith(" kB, 4 debates")
    facts = json.loads(invoke("info", "--json")[1])
    assert facts["entries"] == 4 and facts["exists"] is True and facts["bytes"] > 0
    assert facts["panels"][0] == {
        "panel": PANEL_A,
        "description": "critic + scientist on smollm2-135m",
        "entries": 3,
        "first": "2025-01-10T08:30:00+00:00",
        "last": "2025-03-01T09:00:00+00:00",
    }


def test_cache_names_another_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    filled(tmp_path / "elsewhere", monkeypatch)
    code, said = invoke("info", "--cache", str(tmp_path / "elsewhere"))
    assert code == 0 and str(tmp_path / "elsewhere" / STORE_FILE) in said and "4 debates" in said


def test_prune_by_day_by_panel_and_all(default_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    filled(default_store, monkeypatch)
    code, said = invoke("prune", "--older-than", "2025-02-01")
    assert code == 0, said
    assert said.startswith(f"deleted 2 debates; {default_store / STORE_FILE} now holds 2 debates (")
    code, said = invoke("prune", "--panel", "b2b2")
    assert code == 0 and said.startswith("deleted 1 debate;") and "now holds 1 debate (" in said
    code, said = invoke("prune", "--all")
    assert code == 0 and said.startswith("deleted 1 debate;") and "now holds 0 debates" in said


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ([], "say what to delete: --older-than YYYY-MM-DD, --panel PREFIX or --all"),
        (["--older-than", "1/2/2025"], "--older-than '1/2/2025': give a day as YYYY-MM-DD"),
        (["--all", "--panel", "a1"], "--all deletes every debate; give it alone"),
        (["--panel", "ff"], "no panel of the store's entries starts with 'ff'"),
        (["--panel", ""], "an empty panel prefix names no panel"),
    ],
)
def test_prune_refusals(
    default_store: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], said: str
) -> None:
    filled(default_store, monkeypatch)
    code, output = invoke("prune", *args)
    assert code == 2 and output.startswith("error: cache prune: ") and said in output
    assert len(output.strip().splitlines()) == 1


def test_prune_refuses_a_store_not_made_or_turned_off(
    default_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, said = invoke("prune", "--all")
    assert code == 2 and f"no judgment store at {default_store / STORE_FILE}: nothing to prune" in said
    assert not default_store.exists()
    monkeypatch.setenv("CHATEVAL_CACHE", "off")
    code, said = invoke("prune", "--all")
    assert code == 2 and "the judgment store is off" in said


def test_an_unreadable_store_is_refused_and_prune_all_deletes_it(default_store: Path) -> None:
    default_store.mkdir()
    (default_store / STORE_FILE).write_bytes(b"not a database at all\n" * 50)
    code, said = invoke("info")
    assert code == 2 and "move the file away" in said and len(said.strip().splitlines()) == 1
    code, said = invoke("prune", "--older-than", "2025-01-01")
    assert code == 2 and "prune --all" in said
    code, said = invoke("prune", "--all")
    assert code == 0 and f"deleted {default_store / STORE_FILE}" in said
    assert not (default_store / STORE_FILE).exists()
