"""The one progress bar of a run: debates finished of all debates (both answer orders), the
debate steps done of all (what its percentage, drawn bar and ETA follow: they move with every
turn, long before the first debate ends), requests done, generated tokens per second, and the
model in use; on a ``Console``, as a bar redrawn in place on a terminal or as plain lines at
intervals elsewhere.
"""

import threading
import time

from chateval.core.console import Console

PLAIN_INTERVAL_S = 30.0  # not a terminal: seconds between progress lines
_REDRAW_S = 0.2  # a terminal: the shortest time between two redraws of the bar
_TICK_S = 1.0  # a terminal: the bar's clock and ETA move at least this often
_BAR_WIDTH = 20


def _clock(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


class Progress:
    """The one bar of a run: ``done`` of ``total`` (debates, both answer orders), with the
    ``work`` done of all (debate steps: a referee's turn, or turns said at once, each moved by
    its requests' share as they finish), requests done, generated tokens per second, an ETA and
    the model in use.

    The percentage, the drawn bar and the ETA follow the work, which moves long before the
    first debate ends; a bar started without its own work (a report's items) counts ``done``
    alone. A resumed run starts at what its journal holds; rates count this session only.
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
        self.work_total = 0
        self.work_done = self._work_start = 0.0  # a step's share moves as its requests finish
        self.shows_work = False  # the work is its own count (debate steps), shown beside ``done``
        self.requests = self.tokens = 0
        self.running_tokens = 0  # generated so far by requests still running
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
        """Begin at ``done`` of ``total``; ``work_total``/``work_done`` (debate steps, shown as
        ``steps``) drive the percentage, the drawn bar and the ETA (default: ``total``/``done``
        themselves)."""
        self.total, self.done = total, done
        self.shows_work = work_total is not None
        self.work_total = total if work_total is None else work_total
        self.work_done = self._work_start = done if work_done is None else work_done
        self.started = time.perf_counter()
        if self.console is None:
            return
        if self.delay <= 0:
            self._show()
        self._ticker = threading.Thread(target=self._tick, name="chateval-progress", daemon=True)
        self._ticker.start()

    def grow(self, total: int, work_total: int, work_done: int = 0) -> None:
        """``total`` more to do (``work_total`` more units of work, ``work_done`` of them done
        before this session: a resumed run's journal), for work that comes in while running."""
        self.total += total
        self.work_total += work_total
        self.work_done += work_done
        self._work_start += work_done  # done before: not this session's rate
        self._refresh()

    def update(self, done: int = 0, work: float = 0) -> None:
        """``done`` more finished, ``work`` more units of work done."""
        self.done += done
        self.work_done += work
        self._refresh()

    def add_requests(self, requests: int, tokens: int, running_tokens: int | None = None) -> None:
        """``requests`` more finished, with ``tokens`` generated tokens; ``running_tokens``: what
        the requests still running have generated so far (the speed counts them too)."""
        self.requests += requests
        self.tokens += tokens
        if running_tokens is not None:
            self.running_tokens = running_tokens
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
        if left <= 1e-9:  # shares of a step add up to its whole only to float precision
            eta = "done"
        elif rate_work > 0:
            eta = f"ETA {_clock(left / rate_work)}"
        else:
            eta = "ETA -"
        generated = self.tokens + self.running_tokens
        speed = f"{generated / elapsed:.0f} tok/s" if elapsed > 0 and generated else "- tok/s"
        count = f"{self.unit} {self.done}/{self.total}"
        if self.shows_work:  # a float: a step's requests move it by their shares
            counts = [count, f"steps {int(self.work_done + 1e-9)}/{self.work_total}{self._share()}"]
        else:
            counts = [count + self._share()]
        parts = [*counts, f"{self.requests} requests", speed] if self.shows_requests else counts
        parts += [_clock(elapsed), eta]
        return ", ".join(parts) + (f" [{self.model}]" if self.model else "")

    def _share(self) -> str:
        """The share of the work done: a drawn bar on a terminal, else a percentage."""
        share = min(max(self.work_done / self.work_total, 0.0), 1.0) if self.work_total else 1.0
        if self.console is not None and self.console.terminal:
            filled = round(_BAR_WIDTH * share)
            return f" [{'#' * filled}{'-' * (_BAR_WIDTH - filled)}]"
        return f" ({100 * share:.0f}%)" if self.work_total else ""

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
