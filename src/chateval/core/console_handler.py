"""chateval's log records as console lines: a warning logged with ``extra=once(key, what)`` (a
truncated item, a verdict that did not parse, a cut-off assessment, a server retry) is printed
the first time only, and the count comes at the end (``ConsoleHandler.recap``).
"""

import logging

from chateval.core.console import Console


def once(key: str, what: str) -> dict[str, str]:
    """``extra=`` for a warning the console prints the first time only and counts after:
    ``what`` (plural) names what is counted, e.g. ``"verdicts that did not parse"``."""
    return {"once": key, "counted": what}


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
