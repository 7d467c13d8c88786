"""The judgment store under faults: a damaged entry is a miss, said once and deleted, never a
wrong debate; two processes writing one store at once both finish; a writer killed mid-way
leaves a consistent store with every debate it committed."""

import hashlib
import logging
import signal
import sqlite3
import subprocess
import sys
import threading
import zlib
from pathlib import Path

import pytest

from chateval.errors import OutputError
from chateval.store import database
from chateval.store.database import StoreUnusable
from chateval.store.judgments import STORE_FILE, JudgmentStore, StoredDebate
from tests.support.helpers import ROOT

PANEL = "ab" * 32

# A writer in another process: puts debates w<N>-<i> (i from 0, forever when the count is 0),
# printing each key once its put returned (committed); it starts when a line comes on stdin.
_WRITER = """
import sys
from pathlib import Path
from chateval.store.judgments import JudgmentStore, StoredDebate

folder, name, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
with JudgmentStore(folder) as store:
    print("ready", flush=True)
    sys.stdin.readline()
    number = 0
    while count == 0 or number < count:
        key = f"{name}-{number}"
        utterances = [{"speaker": "Alice", "text": key * 50}, {"speaker": "Bob", "text": "agreed"}]
        store.put(StoredDebate(key, "ab" * 32, utterances, "/runs/" + name, "2025-06-01T10:00:00+00:00"))
        print(key, flush=True)
        number += 1
"""


def debate(key: str) -> StoredDebate:
    return StoredDebate(key, PANEL, [{"speaker": "Alice", "text": f"about {key}"}], "/runs/r", "2025-06-01")


def writers(folder: Path, names: list[str], count: int) -> list[subprocess.Popen[str]]:
    """Writer processes (``_WRITER``), started together (they open the store at once) and
    ready: a line on its stdin sets each going."""
    started = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(folder), name, str(count)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        for name in names
    ]
    for process in started:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    return started


def read_back(folder: Path, keys: list[str]) -> dict[str, StoredDebate]:
    with JudgmentStore(folder) as store:
        return store.get_many(keys)


def integrity(path: Path) -> str:
    with sqlite3.connect(path) as connection:
        return str(connection.execute("PRAGMA integrity_check").fetchone()[0])


def set_payload(path: Path, key: str, payload: bytes, *, rehash: bool) -> None:
    """Write ``payload`` into ``key``'s entry behind the store's back, its digest updated or not."""
    with sqlite3.connect(path) as connection:
        if rehash:
            connection.execute(
                "UPDATE debates SET payload=?, sha256=? WHERE key=?",
                (payload, hashlib.sha256(payload).hexdigest(), key),
            )
        else:
            connection.execute("UPDATE debates SET payload=? WHERE key=?", (payload, key))


def raw_payload(path: Path, key: str) -> bytes:
    with sqlite3.connect(path) as connection:
        return bytes(connection.execute("SELECT payload FROM debates WHERE key=?", (key,)).fetchone()[0])


def flipped(payload: bytes) -> bytes:
    middle = len(payload) // 2
    return payload[:middle] + bytes([payload[middle] ^ 0x01]) + payload[middle + 1 :]


DAMAGES = {
    "a flipped byte": lambda payload: (flipped(payload), False),
    "a truncated payload": lambda payload: (payload[: len(payload) // 2], False),
    "not compressed, its digest matching": lambda payload: (b"\xff not json", True),
    "not JSON, its digest matching": lambda payload: (zlib.compress(b"\xff not json"), True),
    "JSON of the wrong shape, its digest matching": lambda payload: (
        zlib.compress(b'{"speaker": "Alice"}'),
        True,
    ),
}


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_entry_is_a_miss_said_once_deleted_and_mended_by_a_put(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    with JudgmentStore(tmp_path) as store:
        for key in ("k1", "k2", "k3"):
            store.put(debate(key))
    path = tmp_path / STORE_FILE
    payload, rehash = DAMAGES[damage](raw_payload(path, "k2"))
    set_payload(path, "k2", payload, rehash=rehash)
    with JudgmentStore(tmp_path) as store, caplog.at_level(logging.WARNING, "chateval.store"):
        assert store.get_many(["k1", "k2", "k3"]) == {"k1": debate("k1"), "k3": debate("k3")}
        warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
        assert len(warnings) == 1 and "1 damaged entry left out and deleted (the first: k2)" in warnings[0]
        assert str(path) in warnings[0]
        caplog.clear()
        assert store.get_many(["k2"]) == {} and not caplog.records  # deleted: a plain miss now
        store.put(debate("k2"))
        assert store.get_many(["k1", "k2", "k3"]) == {key: debate(key) for key in ("k1", "k2", "k3")}
    assert integrity(path) == "ok"


def test_damaged_entries_of_one_lookup_are_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with JudgmentStore(tmp_path) as store:
        for key in ("k1", "k2", "k3"):
            store.put(debate(key))
    for key in ("k1", "k3"):
        set_payload(tmp_path / STORE_FILE, key, b"[", rehash=False)
    with JudgmentStore(tmp_path) as store, caplog.at_level(logging.WARNING, "chateval.store"):
        assert list(store.get_many(["k1", "k2", "k3"])) == ["k2"]
    (warning,) = caplog.records
    assert "2 damaged entries left out and deleted (the first: k1)" in warning.getMessage()


def test_a_store_file_damaged_as_a_whole_is_a_clear_error(tmp_path: Path) -> None:
    with JudgmentStore(tmp_path) as store:
        for number in range(100):
            store.put(debate(f"k{number}-" + "x" * 2000))
    path = tmp_path / STORE_FILE
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    with pytest.raises(StoreUnusable) as caught:  # on opening it or on reading its pages
        read_back(tmp_path, [f"k{number}-" + "x" * 2000 for number in range(100)])
    said = str(caught.value)
    assert str(path) in said and "SQLite cannot read it" in said and "move the file away" in said


def test_two_processes_writing_one_new_store_at_once_both_finish(tmp_path: Path) -> None:
    both = writers(tmp_path / "shared", ["first", "second"], 200)
    for process in both:  # both go at once
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    for process in both:
        out, _ = process.communicate(timeout=60)
        assert process.returncode == 0
        assert len(out.split()) == 200
    with JudgmentStore(tmp_path / "shared") as store:
        keys = [f"{name}-{number}" for name in ("first", "second") for number in range(200)]
        assert len(store.get_many(keys)) == 400
        assert store.summary().entries == 400
    assert integrity(tmp_path / "shared" / STORE_FILE) == "ok"


def test_a_writer_killed_mid_way_leaves_every_debate_it_committed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (process,) = writers(tmp_path, ["killed"], 0)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("go\n")
    process.stdin.flush()
    committed = [process.stdout.readline().strip() for _ in range(150)]
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    assert process.returncode == -signal.SIGKILL
    path = tmp_path / STORE_FILE
    assert integrity(path) == "ok"
    with JudgmentStore(tmp_path) as store, caplog.at_level(logging.WARNING, "chateval.store"):
        found = store.get_many(committed)
        assert sorted(found) == sorted(committed) and not caplog.records
        assert found["killed-7"].utterances[0]["text"] == "killed-7" * 50
        assert store.summary().entries >= 150


def test_a_write_waits_for_another_writer_and_gives_up_with_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(database, "BUSY_TIMEOUT_S", 0.05)
    with JudgmentStore(tmp_path) as store:
        other = sqlite3.connect(store.path, isolation_level=None, check_same_thread=False)
        other.execute("BEGIN IMMEDIATE")  # another process's write, held
        release = threading.Timer(0.1, other.execute, ["COMMIT"])
        release.start()
        store.put(debate("waited"))  # SQLite's wait, then the retries, outlast a short hold
        release.join()
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(OutputError, match="another process kept it locked for over"):
            store.put(debate("given up"))
        other.execute("ROLLBACK")
        other.close()
        store.put(debate("given up"))
        assert set(store.get_many(["waited", "given up"])) == {"waited", "given up"}
