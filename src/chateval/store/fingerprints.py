"""Content digests of model folders, each file's read once: a file's sha256 is kept in the
store's database under its absolute path and its stat (size, ``st_mtime_ns``, ``st_ino``), and a
later call reads only the files whose stat changed. A folder of tens of GiB is read at the first
run that uses it, not at every run.

The designed trade-off (git's index makes the same one): a file rewritten in place with other
bytes of the same size, its modification time set back to the old one (``os.utime``), keeps its
cached digest. Tools that change weights (a download, a conversion, a copy) write new files or
new times. A file modified less than ``RECENT_S`` ago is read but its digest not kept: a second
write within the file system's time granularity could leave the stat unchanged.
"""

import hashlib
import os
import sqlite3
import time
from pathlib import Path

from chateval.core.model_files import model_files
from chateval.store.database import Database

BLOCK_BYTES = 1 << 20  # files are read in 1 MiB blocks
RECENT_S = 2.0


def file_sha256(path: Path) -> str:
    """The hex sha256 of the whole file at ``path``, read in ``BLOCK_BYTES`` blocks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(BLOCK_BYTES):
            digest.update(block)
    return digest.hexdigest()


class FileDigests:
    """The file-digest table of one store's database."""

    def __init__(self, database: Database) -> None:
        self.database = database

    def folder_digest(self, folder: Path) -> str:
        """``sha256:<hex>`` over the folder's files' relative paths and each file's content
        sha256 (module docstring: read once, then cached by stat). OSError when a file cannot
        be read."""
        folder = folder.resolve()
        digest = hashlib.sha256()
        for path in model_files(folder):
            relative = path.relative_to(folder).as_posix()
            digest.update(f"{relative}\0{self.file_digest(path)}\n".encode())
        return f"sha256:{digest.hexdigest()}"

    def file_digest(self, path: Path) -> str:
        """The hex sha256 of the file at ``path`` (absolute), from the cache while its stat is
        the one it was read with."""
        before = path.stat()
        identity = (str(path), before.st_size, before.st_mtime_ns, before.st_ino)
        cached = self.database.fetch(
            "SELECT sha256 FROM file_digests WHERE path=? AND size=? AND mtime_ns=? AND inode=?", identity
        )
        if cached:
            return str(cached[0][0])
        content = file_sha256(path)
        after = path.stat()
        settled = time.time_ns() - after.st_mtime_ns > RECENT_S * 1e9
        # A file changed while it was read, or changed just now, is not kept: the next call
        # reads it again.
        if settled and (after.st_size, after.st_mtime_ns, after.st_ino) == identity[1:]:
            self.database.write(lambda connection: _keep(connection, identity, content))
        return content


def _keep(connection: sqlite3.Connection, identity: tuple[str, int, int, int], content: str) -> None:
    connection.execute("INSERT OR REPLACE INTO file_digests VALUES (?, ?, ?, ?, ?)", (*identity, content))


def forget_missing(database: Database) -> int:
    """Delete the cached digests of files that are no longer there; how many went."""
    gone = [
        (path,) for (path,) in database.fetch("SELECT path FROM file_digests") if not os.path.exists(path)
    ]
    if gone:
        statement = "DELETE FROM file_digests WHERE path=?"
        database.write(lambda connection: connection.executemany(statement, gone))
    return len(gone)
