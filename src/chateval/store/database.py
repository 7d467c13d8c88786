"""The judgment store's SQLite file: created owner-only, opened in WAL mode, its schema made or
checked, and every statement run with a bounded retry while another process holds the lock.

WAL mode lets readers go on while one process writes, and a write is one short transaction
(``BEGIN IMMEDIATE``: the write lock is taken first, so two writers queue on SQLite's busy
timeout instead of failing at once). ``synchronous=NORMAL``: a commit survives the process
being killed at any point (``kill -9``, out of memory); a power cut may lose the last commits but
never leaves the file inconsistent, which a cache can afford.

SQLite gives the ``-wal`` and ``-shm`` files it makes the database file's own permission bits
(its unix VFS copies them whatever the umask), so making the database file private first is
enough for all three.
"""

import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from chateval.core.file_access import open_private
from chateval.errors import OutputError

SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 5.0  # how long SQLite itself waits for another process's lock
LOCKED_RETRIES = 3  # then as many more waits as this before giving up
SIDE_SUFFIXES = ("-wal", "-shm")

_SCHEMA = (
    "CREATE TABLE meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
    # payload: the utterances as compact UTF-8 JSON, zlib-compressed; sha256: its hex digest,
    # checked on reading.
    "CREATE TABLE debates (key TEXT PRIMARY KEY, panel TEXT NOT NULL, payload BLOB NOT NULL, "
    "sha256 TEXT NOT NULL, judged_in TEXT NOT NULL, judged_at TEXT NOT NULL, stored_at TEXT NOT NULL)",
    "CREATE INDEX debates_by_panel ON debates (panel)",
    "CREATE INDEX debates_by_stored_at ON debates (stored_at)",
    "CREATE TABLE panels (panel TEXT PRIMARY KEY, description TEXT NOT NULL)",
    "CREATE TABLE file_digests (path TEXT PRIMARY KEY, size INTEGER NOT NULL, "
    "mtime_ns INTEGER NOT NULL, inode INTEGER NOT NULL, sha256 TEXT NOT NULL)",
)

# SQLite's primary result codes (an exception's sqlite_errorcode is the extended one).
_BUSY, _LOCKED = 5, 6
_DAMAGED = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB

Result = TypeVar("Result")


class StoreUnusable(OutputError):
    """The store's file is not a judgment store this version can use: not SQLite, damaged as a
    whole, or of another schema version. Moving it away, or ``chateval cache prune --all``,
    starts a new one."""


def side_files(path: Path) -> list[Path]:
    """The database file and the ``-wal`` and ``-shm`` files SQLite keeps beside it."""
    return [path, *(path.with_name(path.name + suffix) for suffix in SIDE_SUFFIXES)]


def unusable(path: Path, why: str) -> StoreUnusable:
    """The error for a store file that cannot be used, with the way out."""
    return StoreUnusable(
        f"judgment store {path}: {why}; move the file away (or run `chateval cache prune --all`, "
        "which deletes it) and the next run starts a new store there"
    )


class Database:
    """One connection to the store's SQLite file, used by one thread."""

    def __init__(self, path: Path) -> None:
        """Open ``path``, creating it private (``core.file_access.file_mode()``) when missing, and
        make or check its schema. StoreUnusable: not a store this version reads."""
        self.path = path
        if not path.exists():
            try:
                os.close(open_private(path, os.O_RDWR | os.O_CREAT))
            except OSError as exc:
                raise OutputError(f"cannot create the judgment store {path}: {exc.strerror or exc}") from None
        try:
            self.connection = sqlite3.connect(path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as exc:
            raise self._error(exc) from None
        try:
            # A file that is there is checked before anything is written to it: another
            # program's SQLite file is refused as it was found.
            existing = self.run(self._check_schema)
            self.run(self._prepare)
            if not existing:
                self.write(self._make_schema)
        except BaseException:
            self.connection.close()
            raise

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self.connection.close()

    def run(self, work: Callable[[sqlite3.Connection], Result]) -> Result:
        """``work(connection)``, again while another process holds the lock (after SQLite's own
        wait, at most ``LOCKED_RETRIES`` times more); every other SQLite error an OutputError
        naming the file."""
        for attempt in range(LOCKED_RETRIES + 1):
            try:
                return work(self.connection)
            except (sqlite3.ProgrammingError, sqlite3.InterfaceError):
                raise  # chateval's own mistake, not the file's
            except sqlite3.Error as exc:
                if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) not in (_BUSY, _LOCKED):
                    raise self._error(exc) from None
                if attempt < LOCKED_RETRIES:
                    time.sleep(0.05 * (attempt + 1))
        waited = (LOCKED_RETRIES + 1) * BUSY_TIMEOUT_S
        raise OutputError(
            f"judgment store {self.path}: another process kept it locked for over {waited:g} s; "
            "try again when it is done"
        )

    def fetch(self, query: str, values: Sequence[Any] = ()) -> list[Any]:
        """The rows of one query, as ``run`` runs it."""
        return self.run(lambda connection: connection.execute(query, values).fetchall())

    def write(self, work: Callable[[sqlite3.Connection], Result]) -> Result:
        """``work(connection)`` in one write transaction, committed whole or not at all."""

        def transaction(connection: sqlite3.Connection) -> Result:
            connection.execute("BEGIN IMMEDIATE")
            try:
                result = work(connection)
                connection.execute("COMMIT")
            except BaseException:
                if connection.in_transaction:
                    connection.execute("ROLLBACK")
                raise
            return result

        return self.run(transaction)

    def _prepare(self, connection: sqlite3.Connection) -> None:
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")

    def _make_schema(self, connection: sqlite3.Connection) -> None:
        # In a write transaction: of two processes opening a new file at once, the second
        # finds the first one's schema here.
        if self._check_schema(connection):
            return
        for statement in _SCHEMA:
            connection.execute(statement)
        connection.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))

    def _check_schema(self, connection: sqlite3.Connection) -> bool:
        """True: the file holds a store of this schema; False: it is empty (a new store).
        StoreUnusable: anything else. The first read of the file: one that is not SQLite fails
        here."""
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not tables:
            return False
        if "meta" not in tables:
            raise unusable(self.path, "an SQLite file that is not a judgment store")
        row = connection.execute("SELECT value FROM meta WHERE name='schema_version'").fetchone()
        version = "none" if row is None else row[0]
        if version != str(SCHEMA_VERSION):
            raise unusable(
                self.path,
                f"written by another chateval version (store schema {version}; this one reads "
                f"{SCHEMA_VERSION})",
            )
        return True

    def _error(self, exc: sqlite3.Error) -> OutputError:
        if (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _DAMAGED:
            return unusable(self.path, f"SQLite cannot read it ({exc})")
        return OutputError(f"judgment store {self.path}: {exc}")
