"""chateval's own lines on the terminal ("loading model ...", warnings), above at most one bar.

A terminal gets the bar (``progress.Progress``) redrawn in place below the lines; anything else
(a CI log, a pipe) gets plain lines and no control codes. While engines run, the console writes
to a duplicate of the original stderr, not to descriptor 2, which then goes to the engine log
(``command_console``).
"""

import os
import sys
import threading
from typing import IO, Protocol


class Bar(Protocol):
    """The bar on a terminal's last line, redrawn below each new line."""

    def draw(self) -> None: ...


def is_terminal(stream: IO[str]) -> bool:
    """``stream`` is a terminal (a closed or detached one is not)."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Console:
    """chateval's own lines, written to ``stream`` (default: stderr) above at most one bar."""

    def __init__(self, stream: IO[str] | None = None, terminal: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.lock = threading.RLock()
        self.bar: Bar | None = None  # the bar on the last line of a terminal

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
