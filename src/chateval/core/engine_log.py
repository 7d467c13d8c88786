"""The engines' output, sent to a log file (``engine.log`` in the run folder) at the level of
file descriptors, with its last lines at hand for when a run fails.

Why file descriptors. The engines log through Python (vLLM's and transformers' loggers, Python
warnings, tqdm bars), but vLLM's engine core, torch's C++ code and the processes engines start
(tensor-parallel workers, Ray actors) write straight to file descriptors 1 and 2; swapping
``sys.stdout`` or configuring loggers misses those. So while engines load and run,
:class:`EngineLog` points descriptors 1 and 2 at a log file (``os.dup2``; child processes inherit
it), and chateval's own lines go to a :class:`~chateval.core.console.Console` that writes to a
duplicate of the original stderr taken before the switch. Whatever any library, C extension or
subprocess writes to the process's stdout or stderr lands in the log; only what chateval writes
through the console reaches the terminal. When a run fails, the log's last lines are printed,
so the engine's own error still reaches the user.
"""

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from chateval.core.file_access import open_private

TAIL_LINES = 25  # of the engine log, printed when a run fails


def _flush_std() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


class EngineLog:
    """Points file descriptors 1 and 2 (this process's and every child's) at a log file.

    ``start`` sends them to a temporary file, as the run folder may not exist yet (nothing is
    written there before the config and data are checked); ``attach`` moves what was written
    so far into the run folder's log and sends the rest there (appending on resume); ``stop``
    restores the terminal. ``tail`` reads the last lines written since ``start``.
    """

    def __init__(self) -> None:
        self.path: Path | None = None
        self._fd: int | None = None
        self._saved: dict[int, int] = {}
        self._since = 0  # where this session's output starts in the current file

    @property
    def active(self) -> bool:
        return self._fd is not None

    def start(self) -> int:
        """Redirect; return a duplicate of the original stderr (for the console)."""
        _flush_std()
        self._saved = {fd: os.dup(fd) for fd in (1, 2)}
        with tempfile.TemporaryFile(prefix="chateval-engine-") as handle:  # unlinked already
            self._fd = os.dup(handle.fileno())
        self._since = 0
        self._point()
        return os.dup(self._saved[2])

    def _point(self) -> None:
        assert self._fd is not None
        os.dup2(self._fd, 1)
        os.dup2(self._fd, 2)

    def attach(self, path: Path, append: bool = True) -> None:
        """From now on write to ``path`` (replaced unless ``append``), after what came so far."""
        if self._fd is None or path == self.path:
            return
        _flush_std()
        flags = os.O_RDWR | os.O_CREAT | os.O_APPEND | (0 if append else os.O_TRUNC)  # read: tail
        target = open_private(path, flags)
        since = os.lseek(target, 0, os.SEEK_END)
        for chunk in self._chunks(self._fd, self._since):
            os.write(target, chunk)
        os.close(self._fd)
        self._fd, self._since, self.path = target, since, path
        self._point()

    @staticmethod
    def _chunks(fd: int, start: int) -> Iterator[bytes]:
        # pread: the descriptor's own offset stays where the engines' writes expect it.
        offset = start
        while chunk := os.pread(fd, 1 << 20, offset):
            yield chunk
            offset += len(chunk)

    def written(self) -> bool:
        """Whether anything was written since ``start``."""
        return self._fd is not None and os.fstat(self._fd).st_size > self._since

    def tail(self, lines: int = TAIL_LINES) -> list[str]:
        """The last ``lines`` lines written since ``start`` (a bar's redraws: its last state)."""
        if self._fd is None:
            return []
        size = os.fstat(self._fd).st_size
        start = max(self._since, size - 256 * 1024)
        text = b"".join(self._chunks(self._fd, start)).decode("utf-8", errors="replace")
        kept = [line.rsplit("\r", 1)[-1].rstrip() for line in text.split("\n")]
        return [line for line in kept if line][-lines:]

    def stop(self) -> None:
        """Give descriptors 1 and 2 back to what they were."""
        if self._fd is None:
            return
        _flush_std()
        for fd, saved in self._saved.items():
            os.dup2(saved, fd)
            os.close(saved)
        self._saved = {}

    def close(self) -> None:
        self.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
