"""What a user sees while chateval runs: its own lines on the terminal, the engines' output in
``engine.log``.

Why file descriptors. The engines log through Python (vLLM's and transformers' loggers, Python
warnings, tqdm bars), but vLLM's engine core, torch's C++ code and the processes engines start
(tensor-parallel workers, Ray actors) write straight to file descriptors 1 and 2; swapping
``sys.stdout`` or configuring loggers misses those. So while engines load and run,
:class:`EngineLog` points descriptors 1 and 2 at a log file (``os.dup2``; child processes inherit
it), and chateval's own lines go to a :class:`Console` that writes to a duplicate of the
original stderr taken before the switch. Whatever any library, C extension or subprocess
writes to the process's stdout or stderr lands in the log; only what chateval writes through
the console reaches the terminal. When a run fails, the log's last lines are printed, so the
engine's own error still reaches the user.

- :class:`Console`: chateval's lines ("loading model ...", warnings) above at most one bar. A
  terminal gets the bar redrawn in place; anything else (a CI log, a pipe) gets plain progress
  lines at intervals and no control codes.
- :class:`Progress`: the one bar of a run: debates finished of all debates (both answer
  orders), requests done, generated tokens per second, an ETA, and the model in use.
- :class:`ConsoleHandler`: chateval's log records on the console. A record logged with
  ``extra=once(key, what)`` (a truncated item, a verdict that did not parse, a cut-off
  assessment, a server retry) is printed the first time only; the count comes at the end.
- :func:`session`: the commands' context that sets these up and restores everything after;
  with ``verbose`` nothing is redirected and the engines' output stays on the terminal.
"""

import contextlib
import logging
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

TAIL_LINES = 25  # of the engine log, printed when a run fails
PLAIN_INTERVAL_S = 30.0  # not a terminal: seconds between progress lines
_REDRAW_S = 0.2  # a terminal: the shortest time between two redraws of the bar
_TICK_S = 1.0  # a terminal: the bar's clock and ETA move at least this often
_BAR_WIDTH = 20
_LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"


def once(key: str, what: str) -> dict[str, str]:
    """``extra=`` for a warning the console prints the first time only and counts after:
    ``what`` (plural) names what is counted, e.g. ``"verdicts that did not parse"``."""
    return {"once": key, "counted": what}


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Console:
    """chateval's own lines, written to ``stream`` (default: stderr) above at most one bar."""

    def __init__(self, stream: IO[str] | None = None, terminal: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = _is_terminal(self.stream) if terminal is None else terminal
        self.lock = threading.RLock()
        self.bar: Progress | None = None  # the bar on the last line of a terminal

    def width(self) -> int:
        try:
            columns = os.get_terminal_size(self.stream.fileno()).columns
        except (AttributeError, OSError, ValueError):
            columns = 0
        return columns or 100  # a pseudo-terminal may not know its size

    def line(self, text: str) -> None:
        """Print one line (above the bar on a terminal)."""
        with self.lock:
            bar = self.bar if self.terminal else None
            self.stream.write(("\r\x1b[K" if bar else "") + text + "\n")
            if bar is not None:
                bar.draw()
            self.stream.flush()


class Progress:
    """The one bar of a run: ``done`` of ``total`` (debates, both answer orders), with requests
    done, generated tokens per second, an ETA and the model in use.

    The ETA comes from ``work`` (debate steps done of all), which moves long before the first
    debate ends. A resumed run starts at what its journal holds; rates count this session only.
    Without a console it only counts (tests, library use). ``delay``: show nothing unless the
    work lasts longer than that many seconds (quick reports stay silent); ``requests=False``: a
    bar of other work, without requests and tokens.
    """

    def __init__(
        self,
        console: Console | None = None,
        unit: str = "debates",
        delay: float = 0.0,
        interval: float = PLAIN_INTERVAL_S,
        requests: bool = True,
    ) -> None:
        self.console = console
        self.unit = unit
        self.shows_requests = requests  # False: a bar of other work (a report's items)
        self.delay = delay
        self.interval = interval
        self.total = self.done = 0
        self.work_total = self.work_done = self._work_start = 0
        self.requests = self.tokens = 0
        self.model: str | None = None
        self.started = 0.0
        self.closed = False
        self._shown = False
        self._last_draw = self._last_line = 0.0
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    # -- counting ------------------------------------------------------------------------
    def start(
        self, total: int, done: int = 0, work_total: int | None = None, work_done: int | None = None
    ) -> None:
        """Begin at ``done`` of ``total``; ``work_total``/``work_done`` drive the ETA (default:
        the same as ``total``/``done``)."""
        self.total, self.done = total, done
        self.work_total = total if work_total is None else work_total
        self.work_done = self._work_start = done if work_done is None else work_done
        self.started = time.perf_counter()
        if self.console is None:
            return
        if self.delay <= 0:
            self._show()
        self._ticker = threading.Thread(target=self._tick, name="chateval-progress", daemon=True)
        self._ticker.start()

    def update(self, done: int = 0, work: int = 0) -> None:
        """``done`` more finished, ``work`` more units of work done."""
        self.done += done
        self.work_done += work
        self._refresh()

    def add_requests(self, requests: int, tokens: int) -> None:
        """``requests`` more finished, with ``tokens`` generated tokens."""
        self.requests += requests
        self.tokens += tokens
        self._refresh()

    def set_model(self, model: str | None) -> None:
        """The model in use now (phased placement: the one loaded)."""
        self.model = model
        self._refresh(force=True)

    def close(self) -> None:
        """Stop the bar, leaving its last state as a line (a terminal's bar ends its line)."""
        if self.closed:
            return
        self.closed = True
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
        console = self.console
        if console is None or not self.started or (not self._shown and self.elapsed() < self.delay):
            return
        with console.lock:
            if console.terminal:
                self.draw()
                console.stream.write("\n")
                console.bar = None
            else:
                console.stream.write(self.text() + "\n")
            console.stream.flush()

    # -- showing -------------------------------------------------------------------------
    def elapsed(self) -> float:
        return time.perf_counter() - self.started if self.started else 0.0

    def text(self) -> str:
        """The bar as one line (without the drawn bar itself when not on a terminal)."""
        elapsed = self.elapsed()
        rate_work = (self.work_done - self._work_start) / elapsed if elapsed > 0 else 0.0
        left = self.work_total - self.work_done
        if left <= 0:
            eta = "done"
        elif rate_work > 0:
            eta = f"ETA {_clock(left / rate_work)}"
        else:
            eta = "ETA -"
        speed = f"{self.tokens / elapsed:.0f} tok/s" if elapsed > 0 and self.tokens else "- tok/s"
        count = f"{self.unit} {self.done}/{self.total}"
        if self.console is not None and self.console.terminal:
            filled = round(_BAR_WIDTH * self.done / self.total) if self.total else _BAR_WIDTH
            count += f" [{'#' * filled}{'-' * (_BAR_WIDTH - filled)}]"
        elif self.total:
            count += f" ({100 * self.done / self.total:.0f}%)"
        parts = [count, f"{self.requests} requests", speed] if self.shows_requests else [count]
        parts += [_clock(elapsed), eta]
        return ", ".join(parts) + (f" [{self.model}]" if self.model else "")

    def draw(self) -> None:
        """Redraw the bar in place (terminal only; the caller holds the console's lock)."""
        assert self.console is not None
        width = self.console.width()
        self.console.stream.write("\r" + self.text()[: max(width - 1, 10)] + "\x1b[K")
        self._last_draw = time.perf_counter()

    def _show(self) -> None:
        console = self.console
        if console is None or self.closed:
            return
        with console.lock:
            self._shown = True
            if console.terminal:
                console.bar = self
                self.draw()
            else:
                console.stream.write(self.text() + "\n")
                self._last_line = time.perf_counter()
            console.stream.flush()

    def _refresh(self, force: bool = False) -> None:
        console = self.console
        if console is None or not self._shown or self.closed or not console.terminal:
            return  # plain lines come from the ticker, at intervals
        if force or time.perf_counter() - self._last_draw >= _REDRAW_S:
            with console.lock:
                self.draw()
                console.stream.flush()

    def _tick(self) -> None:
        assert self.console is not None
        period = _TICK_S if self.console.terminal else min(self.interval, 1.0)
        while not self._stop.wait(period):
            if not self._shown:
                if self.elapsed() >= self.delay:
                    self._show()
                continue
            if self.console.terminal:
                self._refresh(force=True)
            elif time.perf_counter() - self._last_line >= self.interval:
                self._show()


class ConsoleHandler(logging.Handler):
    """chateval's log records (INFO and up) as console lines; a warning logged with
    ``extra=once(...)`` is printed the first time of its key and counted after."""

    def __init__(self, console: Console) -> None:
        super().__init__(logging.INFO)
        self.console = console
        self.counts: dict[str, int] = {}
        self.counted: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        try:
            key = getattr(record, "once", None)
            if key is not None:
                self.counts[key] = self.counts.get(key, 0) + 1
                self.counted[key] = str(getattr(record, "counted", key))
                if self.counts[key] > 1:
                    return
            prefix = "warning: " if record.levelno >= logging.WARNING else ""
            self.console.line(prefix + record.getMessage())
        except Exception:  # a log line must never break a run
            self.handleError(record)

    def recap(self) -> list[str]:
        """One line per warning that came more than once: how many in all."""
        return [
            f"warning: {count} {self.counted[key]} in all (the first one is shown above)"
            for key, count in self.counts.items()
            if count > 1
        ]


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
        target = os.open(path, flags, 0o644)
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


class Session:
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
def session(verbose: bool = False, log_path: Path | None = None) -> Iterator[Session]:
    """The console of one command. Unless ``verbose``, descriptors 1 and 2 go to an engine log
    (``log_path``, or where ``Session.attach`` sends it) until the block ends. If the block
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
    current = Session(console, engine_log, handler)
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
