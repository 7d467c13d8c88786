"""The console of one command (:func:`command_console`): chateval's lines on the terminal, the
engines' output in ``engine.log``; everything restored when the command ends.

- :class:`~chateval.core.console.Console`: chateval's lines ("loading model ...", warnings)
  above at most one bar.
- :class:`~chateval.core.progress.Progress`: the one bar of a run.
- :class:`~chateval.core.console_handler.ConsoleHandler`: chateval's log records on the
  console, a warning logged with ``extra=once(key, what)`` printed the first time only.
- :class:`~chateval.core.engine_log.EngineLog`: descriptors 1 and 2 pointed at the engine log.
- :func:`command_console` sets these up and restores everything after; with ``verbose`` nothing is
  redirected and the engines' output stays on the terminal. When a run fails, the log's last
  lines are printed, so the engine's own error still reaches the user.
"""

import contextlib
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from chateval.core.console import Console
from chateval.core.console_handler import ConsoleHandler
from chateval.core.engine_log import EngineLog
from chateval.core.progress import Progress

_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


class CommandConsole:
    """One command's console: chateval's lines, its bars, and the engines' log."""

    def __init__(self, console: Console, engine_log: EngineLog | None, handler: ConsoleHandler) -> None:
        self.console = console
        self.engine_log = engine_log  # None: verbose, engines write to the terminal
        self.handler = handler
        self.bars: list[Progress] = []

    def progress(self, unit: str = "debates", delay: float = 0.0) -> Progress:
        """A new bar on this console (the previous one is closed)."""
        for bar in self.bars:
            bar.close()
        bar = Progress(self.console, unit, delay)
        self.bars.append(bar)
        return bar

    def line(self, text: str) -> None:
        self.console.line(text)

    def attach(self, path: Path, append: bool = True) -> None:
        """Send the engines' output to ``path`` from now on (nothing when verbose)."""
        if self.engine_log is not None:
            self.engine_log.attach(path, append)


def _writes_to_fd2(stream: IO[str]) -> bool:
    try:
        return stream.fileno() == 2
    except (AttributeError, OSError, ValueError):
        return False


@contextlib.contextmanager
def command_console(verbose: bool = False, log_path: Path | None = None) -> Iterator[CommandConsole]:
    """The console of one command. Unless ``verbose``, descriptors 1 and 2 go to an engine log
    (``log_path``, or where ``CommandConsole.attach`` sends it) until the block ends. If the block
    fails with a backend error or an unexpected exception, the log's last lines are printed
    before the error propagates."""
    engine_log = None if verbose else EngineLog()
    stream, own = sys.stderr, False
    if engine_log is not None:
        try:
            console_fd = engine_log.start()
        except OSError:  # no descriptors to redirect (a detached process): leave them alone
            engine_log = None
        else:
            if _writes_to_fd2(sys.stderr):
                stream = os.fdopen(console_fd, "w", buffering=1, encoding="utf-8", errors="replace")
                own = True
            else:  # a test runner's buffer: no redirection touches it
                os.close(console_fd)
    console = Console(stream)
    handler = ConsoleHandler(console)
    logging.basicConfig(level=logging.WARNING, format=_LOG_FORMAT)
    ours = logging.getLogger("chateval")
    saved = (ours.level, ours.propagate)
    ours.setLevel(logging.INFO)
    ours.propagate = False
    ours.addHandler(handler)
    current = CommandConsole(console, engine_log, handler)
    failed: BaseException | None = None
    try:
        if log_path is not None:
            log_path.parent.mkdir(parents=True, exist_ok=True)
            current.attach(log_path)
        yield current
    except BaseException as exc:
        failed = exc
        raise
    finally:
        for bar in current.bars:
            bar.close()
        ours.removeHandler(handler)
        ours.setLevel(saved[0])
        ours.propagate = saved[1]
        if engine_log is not None:
            engine_log.stop()
        for line in handler.recap():
            console.line(line)
        if engine_log is not None:
            if _shows_engine_tail(failed) and engine_log.written():
                where = engine_log.path or "the engine log"
                console.line(f"last lines of {where}:")
                for line in engine_log.tail():
                    console.line(f"  {line}")
            engine_log.close()
        if own:
            stream.close()


def _shows_engine_tail(failed: BaseException | None) -> bool:
    """A failure the engines may explain: a backend error, or any exception chateval did not
    raise on purpose (a refused config or data file is chateval's own message)."""
    from chateval.errors import BackendError, ChatEvalError

    if failed is None or isinstance(failed, KeyboardInterrupt | SystemExit):
        return False
    return isinstance(failed, BackendError) or not isinstance(failed, ChatEvalError)
