"""The judgment store: finished debates under their keys, in one SQLite file (``database.py``).

An entry is a debate's utterances as compact UTF-8 JSON, zlib-compressed, with the payload's sha256, the panel
fingerprint it was judged by, the run folder that judged it and when. Every entry read is
checked against its digest and its shape: a damaged one is a miss (the run judges that debate
again), deleted, and said once per lookup. Keys, panels and payloads are opaque here.
"""

import hashlib
import json
import logging
import sqlite3
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from chateval.core.file_access import private_folder
from chateval.store.database import Database, side_files
from chateval.store.fingerprints import FileDigests, forget_missing

log = logging.getLogger(__name__)

STORE_FILE = "judgments.sqlite"
# Keys per query: under SQLite's smallest limit on a statement's variables (999 before 3.32).
CHUNK = 500


@dataclass(frozen=True)
class StoredDebate:
    """One finished debate as the store keeps it."""

    key: str  # the debate's key (hex sha256, computed by the run)
    panel: str  # the panel's fingerprint (hex sha256)
    utterances: list[dict[str, Any]]  # JSON-able objects, opaque to the store
    judged_in: str  # the run folder that judged it (absolute path as text)
    judged_at: str  # ISO 8601 UTC time the run started


@dataclass(frozen=True)
class PanelEntries:
    """The entries of one panel fingerprint."""

    panel: str
    description: str  # as given to describe_panel ("" when never described)
    entries: int
    first: str  # ISO time of the oldest entry's stored_at
    last: str  # ... the newest's


@dataclass(frozen=True)
class StoreSummary:
    """What ``chateval cache info`` shows."""

    path: Path  # the .sqlite file
    bytes: int  # the file plus its -wal/-shm files
    entries: int
    panels: list[PanelEntries]  # most entries first


def now() -> str:
    """The time now, UTC, as the store writes it (ISO 8601 to the second: fixed width, so
    stored times compare as text)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def payload_of(utterances: list[dict[str, Any]]) -> bytes:
    """The utterances as the store keeps them: compact UTF-8 JSON, zlib-compressed (debates
    repeat their prompts' words: about a third of the size)."""
    return zlib.compress(json.dumps(utterances, ensure_ascii=False, separators=(",", ":")).encode())


def read_entry(row: tuple[Any, ...]) -> StoredDebate | None:
    """The debate of a ``debates`` row (key, panel, payload, sha256, judged_in, judged_at);
    None when it is damaged: a payload that does not match its digest or is not a list of JSON
    objects, or a field of the wrong type."""
    key, panel, payload, sha256, judged_in, judged_at = row
    if not isinstance(payload, bytes) or hashlib.sha256(payload).hexdigest() != sha256:
        return None
    try:
        utterances = json.loads(zlib.decompress(payload))
    except (zlib.error, ValueError):  # not compressed, not UTF-8 or not JSON
        return None
    if not isinstance(utterances, list) or not all(isinstance(u, dict) for u in utterances):
        return None
    if not all(isinstance(field, str) for field in (key, panel, judged_in, judged_at)):
        return None
    return StoredDebate(key, panel, utterances, judged_in, judged_at)


class JudgmentStore:
    """One SQLite file in WAL mode (``folder/judgments.sqlite``), owner-only, that concurrent
    runs share safely; each write is its own short transaction, so a killed run leaves every
    debate it stored. A context manager: leaving the block closes it."""

    def __init__(self, folder: Path) -> None:
        """Open (creating when missing) ``folder/judgments.sqlite``. The folder is made owner-only
        (``chateval.core.file_access.private_folder``) and so is the file (``file_mode()``, as run
        folders' files are). A file that is not a SQLite database, or one of an unknown schema
        version, is a ``StoreUnusable`` (an OutputError) naming the path and the way out."""
        private_folder(folder)
        self._database = Database(folder / STORE_FILE)
        self._digests = FileDigests(self._database)

    @property
    def path(self) -> Path:
        """The .sqlite file."""
        return self._database.path

    def __enter__(self) -> "JudgmentStore":
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the store's connection."""
        self._database.close()

    def get_many(self, keys: Sequence[str]) -> dict[str, StoredDebate]:
        """The entries of ``keys`` the store holds, each checked (module docstring): a damaged
        one is left out, deleted, and counted in one warning per call."""
        found: dict[str, StoredDebate] = {}
        damaged: list[tuple[Any, ...]] = []
        unique = list(dict.fromkeys(keys))
        for start in range(0, len(unique), CHUNK):
            chunk = unique[start : start + CHUNK]
            marks = ",".join("?" * len(chunk))
            query = (
                "SELECT key, panel, payload, sha256, judged_in, judged_at FROM debates "
                f"WHERE key IN ({marks})"
            )
            for row in self._database.fetch(query, chunk):
                entry = read_entry(row)
                if entry is None:
                    damaged.append(row)
                else:
                    found[entry.key] = entry
        if damaged:
            self._database.write(lambda connection: _delete_rows(connection, damaged))
            log.warning(
                "judgment store %s: %d damaged %s left out and deleted (the first: %s); judged again",
                self.path,
                len(damaged),
                "entry" if len(damaged) == 1 else "entries",
                damaged[0][0],
            )
        return found

    def put(self, debate: StoredDebate) -> None:
        """Store one finished debate durably, in its own short transaction. A key stored already
        is replaced (a second run that judged it writes the same; a damaged entry is mended)."""
        payload = payload_of(debate.utterances)
        row = (
            debate.key,
            debate.panel,
            payload,
            hashlib.sha256(payload).hexdigest(),
            debate.judged_in,
            debate.judged_at,
            now(),
        )
        statement = "INSERT OR REPLACE INTO debates VALUES (?, ?, ?, ?, ?, ?, ?)"
        self._database.write(lambda connection: connection.execute(statement, row))

    def describe_panel(self, panel: str, description: str) -> None:
        """Keep a one-line human description of a panel fingerprint (``chateval cache`` shows it);
        the first description given is kept."""
        line = " ".join(description.split())
        self._database.write(
            lambda connection: connection.execute("INSERT OR IGNORE INTO panels VALUES (?, ?)", (panel, line))
        )

    def summary(self) -> StoreSummary:
        """The store's size on disk, its entries, and its panels, most entries first."""
        query = (
            "SELECT d.panel, COALESCE(p.description, ''), COUNT(*), MIN(d.stored_at), MAX(d.stored_at) "
            "FROM debates d LEFT JOIN panels p ON p.panel = d.panel "
            "GROUP BY d.panel ORDER BY COUNT(*) DESC, d.panel"
        )
        panels = [PanelEntries(*row) for row in self._database.fetch(query)]
        size = sum(path.stat().st_size for path in side_files(self.path) if path.exists())
        return StoreSummary(self.path, size, sum(panel.entries for panel in panels), panels)

    def prune(
        self, *, before: datetime | None = None, panel: str | None = None, everything: bool = False
    ) -> int:
        """Delete every entry (``everything``), or those stored before ``before`` (a naive time
        is local time) and/or judged by ``panel`` (a unique prefix of its fingerprint; an
        ambiguous or unknown one is a ValueError naming the matches). Returns how many went.
        The file shrinks after a deletion (VACUUM). A panel deleted by name, or everything,
        takes its description along; cached file digests of files no longer there go too. At
        least one criterion is required (ValueError otherwise)."""
        if before is None and panel is None and not everything:
            raise ValueError("prune: give a time, a panel or everything")
        conditions: list[str] = []
        values: list[str] = []
        if not everything:
            if before is not None:
                conditions.append("stored_at < ?")
                values.append(before.astimezone(UTC).isoformat(timespec="seconds"))
            if panel is not None:
                conditions.append("panel = ?")
                values.append(self._panel_of(panel))
        where = " AND ".join(conditions) or "1"
        gone_panel = values[-1] if panel is not None and not everything else None

        def delete(connection: sqlite3.Connection) -> int:
            deleted = connection.execute(f"DELETE FROM debates WHERE {where}", values).rowcount
            if everything:
                connection.execute("DELETE FROM panels")
            elif gone_panel is not None:
                connection.execute(
                    "DELETE FROM panels WHERE panel = ? AND NOT EXISTS "
                    "(SELECT 1 FROM debates WHERE panel = ?)",
                    (gone_panel, gone_panel),
                )
            return deleted

        deleted = self._database.write(delete)
        forget_missing(self._database)
        if deleted:
            self._shrink()
        return deleted

    def folder_digest(self, folder: Path) -> str:
        """``sha256:<hex>`` of a model folder: over its files' relative paths (sorted; hidden files
        and folders left out, as ``chateval.record.roster.folder_fingerprint`` does) and each
        file's whole-content sha256, cached in the store under (absolute path, size, mtime,
        inode): a later call reads only the files whose stat changed (``fingerprints.py``)."""
        return self._digests.folder_digest(folder)

    def _panel_of(self, prefix: str) -> str:
        """The one panel fingerprint stored entries have that starts with ``prefix``."""
        prefix = prefix.strip().lower()  # fingerprints are lower-case hex
        if not prefix:
            raise ValueError("an empty panel prefix names no panel")
        query = "SELECT DISTINCT panel FROM debates WHERE substr(panel, 1, ?) = ?"
        matches = [panel for (panel,) in self._database.fetch(query, (len(prefix), prefix))]
        if len(matches) == 1:
            return str(matches[0])
        if not matches:
            raise ValueError(f"no panel of the store's entries starts with {prefix!r}")
        shown = ", ".join(sorted(match[:16] for match in matches)[:5])
        raise ValueError(f"{len(matches)} panels start with {prefix!r} ({shown}...): give more of it")

    def _shrink(self) -> None:
        # VACUUM writes the compacted database through the WAL; the checkpoint moves it into the
        # file and empties the WAL, so the space is given back to the file system.
        self._database.run(lambda connection: connection.execute("VACUUM"))
        self._database.run(lambda connection: connection.execute("PRAGMA wal_checkpoint(TRUNCATE)"))


def discard(folder: Path) -> list[Path]:
    """Delete the store in ``folder`` (its file and the ``-wal`` and ``-shm`` files), what
    ``chateval cache prune --all`` does to a file it cannot open as a store; the paths deleted."""
    gone = [path for path in side_files(folder / STORE_FILE) if path.exists()]
    for path in gone:
        path.unlink()
    return gone


def _delete_rows(connection: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    # Only the damaged row itself: another process may have replaced it with a good one since.
    connection.executemany(
        "DELETE FROM debates WHERE key = ? AND payload IS ? AND sha256 IS ?",
        [(row[0], row[2], row[3]) for row in rows],
    )
