"""The rich console that summaries and tables print on (:func:`table_console`).

Off a terminal (a log file, CI, a pipe) rich would lay every table out in 80 columns and cut
what does not fit ("systems_c…", two item ids cut to the same ``82:steady-…``): there it gets
``$COLUMNS`` when set, else :data:`PLAIN_WIDTH`. On any console a table's cells wrap between
words, never inside one, while the table's longest words fit side by side; when they cannot (a
narrow terminal), a word too long for its column goes on over the next line instead of being
cut. Ids, system and run names are single words: they are shown whole; questions wrap.
"""

import os
import sys
from typing import IO

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderableType, RenderHook
from rich.measure import Measurement
from rich.table import Table

from chateval.core.console import is_terminal

PLAIN_WIDTH = 200  # off a terminal: columns, unless $COLUMNS says otherwise

_UNBOUNDED = 1_000_000  # a width no table reaches: to measure a table's natural width


def table_console(file: IO[str] | None = None) -> Console:
    """A rich console on ``file`` (default: stdout): a terminal's own width, else ``$COLUMNS``
    or :data:`PLAIN_WIDTH`; every table it prints keeps its words whole (module docstring)."""
    console = Console(file=file)
    if not is_terminal(file if file is not None else sys.stdout) and not _columns_set():
        console.width = PLAIN_WIDTH
    console.push_render_hook(_WholeWords(console))
    return console


def _columns_set() -> bool:
    """``$COLUMNS`` names a width (rich reads it itself)."""
    return os.environ.get("COLUMNS", "").strip().isdigit()


class _WholeWords(RenderHook):
    """Gives each table printed on ``console`` columns that wrap between words only."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        for renderable in renderables:
            if isinstance(renderable, Table):
                keep_words_whole(renderable, self.console)
        return renderables


def keep_words_whole(table: Table, console: Console) -> None:
    """Lay ``table`` out on ``console`` so that no word of a cell is cut or broken while the
    longest word of every column fits side by side: the widest columns are narrowed first, as
    rich does, but none below its longest word (rich's own layout narrows an id column with the
    others and cuts its ids). When even the longest words do not fit (a narrow terminal),
    rich lays it out and folds what its columns cannot hold onto the next line, never cutting
    it."""
    for column in table.columns:
        column.overflow = "fold"
    if table.width is not None or any(column.width is not None for column in table.columns):
        return  # laid out by its maker
    unbounded = console.options.update_width(_UNBOUNDED)
    headers = table.show_header
    cells = [[*([column.header] if headers else []), *column.cells] for column in table.columns]
    shortest = [max(_measure(console, unbounded, cell).minimum for cell in column) for column in cells]
    widest = [max(_measure(console, unbounded, cell).maximum for cell in column) for column in cells]
    frame = _measure(console, unbounded, table).maximum - sum(widest)  # rules and padding
    room = console.width - frame
    if sum(widest) <= room or sum(shortest) > room:
        return  # it fits as it is; or its words cannot all be whole
    for column, width in zip(table.columns, _water_level(shortest, widest, room), strict=True):
        column.width = width


def _water_level(shortest: list[int], widest: list[int], room: int) -> list[int]:
    """Column widths that fill ``room``: the widest columns cut down to one level first, none
    below its ``shortest`` (its longest word); what the level's rounding leaves goes to the
    columns cut."""

    def at(level: int) -> list[int]:
        return [max(least, min(most, level)) for least, most in zip(shortest, widest, strict=True)]

    level = max(widest)
    while sum(at(level)) > room:
        level -= 1
    widths = at(level)
    spare = room - sum(widths)
    for index, most in enumerate(widest):
        if spare and widths[index] < most:
            widths[index] += 1
            spare -= 1
    return widths


def _measure(console: Console, options: ConsoleOptions, renderable: RenderableType) -> Measurement:
    """Rich's measure of ``renderable``: its longest word (minimum) and its width on one line."""
    return Measurement.get(console, options, renderable)
