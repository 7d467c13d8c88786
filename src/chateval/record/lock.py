"""A run folder under one hand: the lock a command holds while it writes the folder.

A writer (``chateval run`` and its resume, ``rescore``, ``import``, ``sweep``) holds an exclusive
``flock`` on the folder's lock file (``RunFolder.lock``) from before its first write to its end,
with who it is written in the file (pid, host, since when, the command) for the refusal a second
writer gets at once. The lock file is removed when the writer ends, normally or by an exception
(Ctrl-C and SIGTERM included). Readers (report, export, compare) never take it: every run file
is written whole under a temporary name and renamed into place, so they read whole files while
a writer works.

The kernel releases a ``flock`` when its process dies, however it dies (``kill -9``, out of
memory), so a lock file left by a killed writer holds nothing: the next writer on the same host
takes it over and says whose it was. On one host the ``flock`` decides, not the pid written in
the file: a pid is reused (a container's process often has the same pid each time it starts),
and the kernel's lock is there exactly while its holder lives. A lock file written on another
host (a folder on a shared file system) is not taken over: whether that host's ``flock`` reaches
this one depends on the file system, and its pid cannot be looked up from here, so the refusal
names the host and the file to delete once that process has ended (as git does with its
index.lock).

A process that holds a folder's lock may take it again (a run locks a folder there already
before it reads its config's tokenizers, and a new one once it made it; a sweep locks every
run's folder before it loads a model, then each run takes its own): the inner hold is the
outer's. A forked child (an engine's worker) closes its copy of the lock's descriptor, so that
a worker outliving its killed writer does not keep the folder locked.
"""

import errno
import fcntl
import json
import logging
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path

from chateval.core.file_access import open_private
from chateval.errors import ChatEvalError, ConfigError

log = logging.getLogger(__name__)

_held: dict[Path, int] = {}  # the lock files this process holds -> their descriptors


class RunFolderBusy(ChatEvalError):
    """Another command is writing the run folder (or may be: another host's lock)."""


@dataclass(frozen=True)
class Holder:
    """Who holds a run folder's lock, as its lock file says."""

    pid: int
    host: str
    since: str  # local time with its offset, to the second
    command: str  # e.g. "chateval run"

    def describe(self) -> str:
        """The holder as a message names it: its command, pid, host and start."""
        return f"`{self.command}`, pid {self.pid} on host {self.host}, since {self.since}"

    @classmethod
    def read(cls, fd: int) -> "Holder | None":
        """The holder the lock file open at ``fd`` names; None: it names none (a writer that has
        not written it yet, or one killed before it did)."""
        try:
            raw = json.loads(os.pread(fd, 4096, 0))
            return cls(int(raw["pid"]), str(raw["host"]), str(raw["since"]), str(raw["command"]))
        except (OSError, ValueError, TypeError, KeyError):
            return None


@contextmanager
def holding(lock: Path, command: str) -> Iterator[None]:
    """Hold the run folder's lock file ``lock`` while the block runs, as ``command``; the folder
    must exist. A second writer gets a ``RunFolderBusy`` naming the holder; readers are never
    blocked (module doc)."""
    key = lock.resolve()
    if key in _held:  # this process holds it already: the outer hold releases it
        yield
        return
    fd = _acquire(lock, command)
    _held[key] = fd
    owner = os.getpid()
    try:
        yield
    finally:
        if os.getpid() == owner:  # a forked child unwinding here leaves its parent's lock alone
            del _held[key]
            lock.unlink(missing_ok=True)  # while still held: no other writer has it yet
            os.close(fd)


def _acquire(lock: Path, command: str) -> int:
    """Take ``lock`` (a descriptor holding its ``flock``) and write this process into it."""
    while True:
        try:
            fd = open_private(lock, os.O_RDWR | os.O_CREAT)
        except OSError as exc:
            raise ConfigError(f"{lock.parent}: cannot write the run folder ({exc.strerror})") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = Holder.read(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise ConfigError(f"{lock}: cannot lock the run folder ({exc.strerror})") from None
            raise RunFolderBusy(_held_by(lock, holder)) from None
        if _still_there(lock, fd):
            break
        os.close(fd)  # its holder removed it between our open and our flock: take the new one
    left = Holder.read(fd)
    if left is not None and left.host != socket.gethostname():
        os.close(fd)  # not ours to take over, nor to remove
        raise RunFolderBusy(
            f"{lock.parent} is locked by {left.describe()}, another host: this one cannot tell "
            f"whether it still runs; once it has ended, delete {lock} and run this again"
        )
    if left is not None:
        log.warning(
            "%s: taking over the lock left by %s, which ended without removing it",
            lock.parent,
            left.describe(),
        )
    elif os.fstat(fd).st_size:
        log.warning("%s: taking over a lock left by a writer that ended before naming itself", lock.parent)
    since = datetime.now().astimezone().isoformat(timespec="seconds")
    mine = Holder(os.getpid(), socket.gethostname(), since, command)
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(asdict(mine)) + "\n").encode("utf-8"), 0)
    return fd


def _still_there(lock: Path, fd: int) -> bool:
    """Whether the locked descriptor is still the file at ``lock`` (a writer that ends removes
    its lock file, and a newcomer then creates another)."""
    try:
        return os.stat(lock).st_ino == os.fstat(fd).st_ino
    except FileNotFoundError:
        return False


def _held_by(lock: Path, holder: Holder | None) -> str:
    """The refusal of a second writer: the folder, and who holds it."""
    if holder is None:
        return f"{lock.parent} is being written by another command (starting: it has not named itself yet)"
    gone = holder.host == socket.gethostname() and not _alive(holder.pid)
    return (
        f"{lock.parent} is being written by {holder.describe()}"
        + (" (ended; a process it started still holds the lock)" if gone else "")
        + "; wait for it to end (report, export and compare read the folder meanwhile)"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _close_in_child() -> None:
    """A forked child (an engine's worker) does not keep its parent's locks: were the parent
    killed, the lock would stay held by a process that never writes the folder."""
    for fd in _held.values():
        os.close(fd)
    _held.clear()


os.register_at_fork(after_in_child=_close_in_child)
