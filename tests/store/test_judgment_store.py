"""The judgment store's entries: stored and read back, looked up in bulk, summed up per panel,
pruned; the store's file private; a file that is not a store refused with the way out."""

import os
import re
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from chateval.store import judgments
from chateval.store.database import StoreUnusable
from chateval.store.judgments import STORE_FILE, JudgmentStore, StoredDebate

PANEL_A = "aa11" + "0" * 60
PANEL_B = "aa22" + "0" * 60
PANEL_C = "cc33" + "0" * 60


def debate(key: str, panel: str = PANEL_A, words: int = 3) -> StoredDebate:
    """A debate of two utterances (``words`` words each) under ``key``."""
    utterances = [
        {"speaker": name, "text": " ".join(["ok"] * words), "tokens": 7} for name in ("Alice", "Bob")
    ]
    return StoredDebate(key, panel, utterances, "/runs/first", "2025-06-01T10:00:00+00:00")


def stored_at(monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    """Entries put from now on are stored at ``when``."""
    monkeypatch.setattr(judgments, "now", lambda: when)


def test_a_debate_put_reads_back_the_same_and_other_keys_miss(tmp_path: Path) -> None:
    with JudgmentStore(tmp_path / "cache") as store:
        stored = StoredDebate(
            "k1", PANEL_A, [{"text": "é ✓", "n": [1, 2.5, None]}], "/runs/r", "2025-06-01T10:00:00+00:00"
        )
        store.put(stored)
        assert store.path == tmp_path / "cache" / STORE_FILE
        assert store.get_many(["k1", "k2", "k1"]) == {"k1": stored}
        assert store.get_many([]) == {}
    with JudgmentStore(tmp_path / "cache") as store:  # kept across opens
        assert store.get_many(["k1"]) == {"k1": stored}


def test_a_second_put_of_a_key_replaces_it(tmp_path: Path) -> None:
    with JudgmentStore(tmp_path) as store:
        store.put(debate("k1"))
        store.put(debate("k1", words=5))
        assert store.get_many(["k1"])["k1"] == debate("k1", words=5)
        assert store.summary().entries == 1


def test_a_lookup_of_more_keys_than_sqlite_takes_in_one_query(tmp_path: Path) -> None:
    with JudgmentStore(tmp_path) as store:
        for number in range(1200):
            store.put(debate(f"k{number}"))
        asked = [f"k{number}" for number in range(0, 2400, 2)]  # 600 held, 600 not
        found = store.get_many(asked)
    assert sorted(found) == sorted(f"k{number}" for number in range(0, 1200, 2))


def test_the_summary_counts_entries_per_panel_with_the_first_description(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with JudgmentStore(tmp_path) as store:
        stored_at(monkeypatch, "2025-01-01T00:00:00+00:00")
        store.put(debate("a1"))
        store.put(debate("c1", PANEL_C))
        stored_at(monkeypatch, "2025-03-01T00:00:00+00:00")
        store.put(debate("a2"))
        store.describe_panel(PANEL_A, "critic + scientist,\n  smollm2-135m")
        store.describe_panel(PANEL_A, "a later description")
        summary = store.summary()
    assert summary.entries == 3 and summary.path == tmp_path / STORE_FILE
    assert summary.bytes >= (tmp_path / STORE_FILE).stat().st_size > 0
    first, second = summary.panels
    assert (first.panel, first.description, first.entries) == (PANEL_A, "critic + scientist, smollm2-135m", 2)
    assert (first.first, first.last) == ("2025-01-01T00:00:00+00:00", "2025-03-01T00:00:00+00:00")
    assert (second.panel, second.description, second.entries) == (PANEL_C, "", 1)


def test_prune_by_date_panel_prefix_and_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with JudgmentStore(tmp_path) as store:
        stored_at(monkeypatch, "2025-01-01T12:00:00+00:00")
        for key, panel in (("a-old", PANEL_A), ("b-old", PANEL_B), ("c-old", PANEL_C)):
            store.put(debate(key, panel))
        stored_at(monkeypatch, "2025-03-01T12:00:00+00:00")
        for key, panel in (("a-new", PANEL_A), ("b-new", PANEL_B), ("c-new", PANEL_C)):
            store.put(debate(key, panel))
        store.describe_panel(PANEL_C, "the C panel")

        assert store.prune(before=datetime(2025, 2, 1, tzinfo=UTC)) == 3
        assert set(store.get_many(["a-old", "b-old", "c-old", "a-new", "b-new", "c-new"])) == {
            "a-new",
            "b-new",
            "c-new",
        }
        with pytest.raises(ValueError, match="2 panels start with 'aa'"):
            store.prune(panel="aa")
        with pytest.raises(ValueError, match="no panel .* starts with 'ff'"):
            store.prune(panel="ff")
        assert store.prune(panel="CC3") == 1  # a unique prefix, any case
        assert [p.panel for p in store.summary().panels] == [PANEL_A, PANEL_B]
        store.put(debate("c-again", PANEL_C))
        assert store.summary().panels[-1].description == ""  # the pruned panel's description went
        assert store.prune(panel="aa1", before=datetime(2025, 2, 1, tzinfo=UTC)) == 0  # both criteria
        assert store.prune(everything=True) == 3
        assert store.summary().entries == 0
        with pytest.raises(ValueError, match="give a time, a panel or everything"):
            store.prune()


def test_pruning_shrinks_the_file(tmp_path: Path) -> None:
    with JudgmentStore(tmp_path) as store:
        for number in range(300):
            store.put(debate(f"k{number}", words=400))
        full = store.summary().bytes
        assert store.prune(everything=True) == 300
        emptied = store.summary().bytes
    assert emptied < full / 10, (full, emptied)


def test_the_store_is_private_whatever_the_umask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CHATEVAL_FILE_ACCESS", raising=False)
    previous = os.umask(0)
    try:
        with JudgmentStore(tmp_path / "deep" / "cache") as store:
            store.put(debate("k1"))  # the -wal and -shm files exist while it is open
            made = [store.path, *(store.path.with_name(store.path.name + s) for s in ("-wal", "-shm"))]
            modes = {path.name: path.stat().st_mode & 0o777 for path in made}
            folder = (tmp_path / "deep" / "cache").stat().st_mode & 0o777
    finally:
        os.umask(previous)
    assert folder == 0o700
    assert modes == {"judgments.sqlite": 0o600, "judgments.sqlite-wal": 0o600, "judgments.sqlite-shm": 0o600}


def test_a_file_that_is_not_sqlite_is_refused_with_the_way_out(tmp_path: Path) -> None:
    (tmp_path / STORE_FILE).write_bytes(b"these are my notes, not a database\n" * 100)
    with pytest.raises(StoreUnusable) as caught:
        JudgmentStore(tmp_path)
    said = str(caught.value)
    assert str(tmp_path / STORE_FILE) in said and "move the file away" in said and "prune --all" in said


@pytest.mark.parametrize(
    ("tables", "said"),
    [
        (["CREATE TABLE notes (text TEXT)"], "an SQLite file that is not a judgment store"),
        (
            [
                "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT)",
                "INSERT INTO meta VALUES ('schema_version', '99')",
            ],
            "another chateval version (store schema 99; this one reads 1)",
        ),
    ],
)
def test_another_sqlite_file_is_refused_and_left_as_it_was(
    tmp_path: Path, tables: list[str], said: str
) -> None:
    with sqlite3.connect(tmp_path / STORE_FILE) as connection:
        for statement in tables:
            connection.execute(statement)
    before = (tmp_path / STORE_FILE).read_bytes()
    with pytest.raises(StoreUnusable, match=re.escape(said)):
        JudgmentStore(tmp_path)
    assert (tmp_path / STORE_FILE).read_bytes() == before
