"""The look the systems' pictures share: a colour-blind-safe palette (Okabe & Ito 2008) that
never carries meaning alone (every series also has its own marker, hatch or line style, so a
black-and-white print tells them apart), figures that grow with the number of systems, and one
drawing of points with their 95% intervals, a row per system."""

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Okabe-Ito: distinguishable under the common colour-vision deficiencies.
BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, YELLOW, BLACK = (
    "#0072B2",
    "#D55E00",
    "#009E73",
    "#CC79A7",
    "#E69F00",
    "#56B4E9",
    "#F0E442",
    "#000000",
)
PALETTE = (BLUE, VERMILLION, GREEN, PURPLE, ORANGE, SKY, BLACK)
MARKERS = ("o", "s", "D", "^", "v", "P", "X")
LINE_STYLES = ("-", "--", ":", "-.")
HATCHES = ("", "///", "...", "xxx", "\\\\\\")
# Inches a system's row takes per series drawn in it, beyond a base: 20 systems with three
# series each stay readable at 9 points (checked on a synthetic 20-system board).
ROW_BASE_IN, ROW_PER_SERIES_IN = 0.16, 0.11

Point = tuple[float, float, float]  # value, low, high of its 95% interval


@dataclass(frozen=True)
class Series:
    """Points of one kind (a board, a run, a dimension), by row name, and how to draw them."""

    label: str
    points: Mapping[str, Point]
    colour: str
    marker: str
    line_style: str = "-"


@dataclass(frozen=True)
class Margins:
    """Room around the panels, in inches: the row labels on the left, the group letters on the
    right, the axis label and legend below, titles above."""

    left: float
    right: float = 0.25
    bottom: float = 0.55
    top: float = 0.15


# A picture's title (a PNG beside report.md is read alone): its lines' height and the room
# above and below them, in inches.
TITLE_POINTS, TITLE_LINE_IN, TITLE_PAD_IN = 10, 0.2, 0.12


def title_lines(title: str, width: float) -> list[str]:
    """``title`` wrapped to lines that fit ``width`` inches at the title's size."""
    chars = max(20, int((width - 0.2) / (TITLE_POINTS * 0.62 / 72)))
    return textwrap.wrap(title, chars)


def title_height(title: str, width: float) -> float:
    """Inches ``title`` takes above the panels, wrapped to ``width``."""
    return TITLE_LINE_IN * len(title_lines(title, width)) + TITLE_PAD_IN


def put_title(fig: "Figure", title: str) -> None:
    """The figure's title at its top, centred, wrapped to its width."""
    width, height = fig.get_size_inches()
    text = "\n".join(title_lines(title, width))
    fig.suptitle(text, y=1 - 0.06 / height, va="top", fontsize=TITLE_POINTS, fontweight="bold")


def figure(
    nrows: int,
    ncols: int,
    panel: tuple[float, float],
    margins: Margins,
    gap: tuple[float, float] = (0.3, 0.8),
    title: str = "",
    **options: Any,
) -> tuple["Figure", Any]:
    """A figure of ``nrows`` x ``ncols`` panels of ``panel`` inches each, ``gap`` inches apart,
    with ``margins`` around them and ``title`` above them all, drawn without a screen. The
    margins are set from the labels' lengths rather than by a layout engine: measuring every
    text before drawing doubled the time a report spends on its pictures. The axes are ``Any``
    in matplotlib's own types."""
    # A bare Figure, not pyplot's: no screen or figure manager to set up (a GPU node has no
    # screen), and savefig draws it with Agg (PNG) or the SVG backend all the same.
    from matplotlib.figure import Figure

    width = margins.left + margins.right + ncols * panel[0] + (ncols - 1) * gap[0]
    top = margins.top + (title_height(title, width) if title else 0.0)
    height = top + margins.bottom + nrows * panel[1] + (nrows - 1) * gap[1]
    fig = Figure(figsize=(width, height))
    axes = fig.subplots(nrows, ncols, squeeze=False, **options)
    fig.subplots_adjust(
        left=margins.left / width,
        right=1 - margins.right / width,
        bottom=margins.bottom / height,
        top=1 - top / height,
        wspace=gap[0] / panel[0],
        hspace=gap[1] / panel[1],
    )
    if title:
        put_title(fig, title)
    return fig, axes


def text_width(texts: Sequence[str], points: float = 10) -> float:
    """Inches the longest of ``texts`` takes at ``points`` (DejaVu Sans averages about 0.6 em a
    character; a little over, so a label is never cut)."""
    return max((len(t) for t in texts), default=0) * points * 0.66 / 72 + 0.1


def rows_height(rows: int, series: int) -> float:
    """A panel height (inches) that keeps ``rows`` rows of ``series`` points each legible."""
    return max(1.2, rows * (ROW_BASE_IN + ROW_PER_SERIES_IN * max(series, 1)))


# Inches a legend entry takes beyond its label's text: the marker, its line and the gaps.
LEGEND_ENTRY_IN = 0.45


def legend_below(fig: "Figure", ax: Any, columns: int) -> None:
    """The series' legend at the figure's foot, under the axis label (never over a point). A
    legend wider than the figure (several runs' long names) widens the figure, its margins kept
    in inches, so that nothing is cut off at the sides."""
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    columns = min(columns, len(handles))
    needed = columns * (text_width(labels, 8) + LEGEND_ENTRY_IN)
    width, height = fig.get_size_inches()
    if needed > width:
        left, right = fig.subplotpars.left * width, (1 - fig.subplotpars.right) * width
        fig.set_size_inches(needed, height)
        fig.subplots_adjust(left=left / needed, right=1 - right / needed)
    fig.legend(handles, labels, loc="lower center", ncols=columns, fontsize=8, frameon=False)


def legend_rows(series: int, columns: int) -> float:
    """Inches the legend takes below the axes."""
    return 0.25 * -(-series // columns) if series else 0.0


def interval_rows(ax: Any, rows: Sequence[str], series: Sequence[Series]) -> None:
    """Each series' points with their 95% intervals as horizontal bars, one row per name (the
    first at the top), a row's series side by side vertically so none hides another; a point
    whose interval has no width (an anchor) is drawn alone. Alternate rows are shaded to follow
    a row across a long board."""
    step = 0.72 / max(len(series), 1)
    for k, found in enumerate(series):
        offset = (k - (len(series) - 1) / 2) * step
        shown = [(i, found.points[name]) for i, name in enumerate(rows) if name in found.points]
        if not shown:
            continue
        ys = [i + offset for i, _ in shown]
        xs = [value for _, (value, _, _) in shown]
        below = [max(value - low, 0.0) for _, (value, low, _) in shown]
        above = [max(high - value, 0.0) for _, (value, _, high) in shown]
        bars = ax.errorbar(
            xs,
            ys,
            xerr=[below, above],
            fmt=found.marker,
            color=found.colour,
            markersize=5.5,
            markeredgecolor=BLACK,
            markeredgewidth=0.6,
            elinewidth=1.5,
            capsize=2.5,
            label=found.label,
        )
        for line in bars.lines[2]:
            line.set_linestyle(found.line_style)
    for i in range(1, len(rows), 2):
        ax.axhspan(i - 0.5, i + 0.5, color="0.94", zorder=0, linewidth=0)
    ax.set_yticks(range(len(rows)), rows)
    ax.set_ylim(len(rows) - 0.5, -0.5)
    ax.grid(axis="x", alpha=0.35)
    ax.set_axisbelow(True)


def side_width(columns: Sequence[tuple[str, Mapping[str, str]]]) -> float:
    """Inches the side columns take (with their label), 0 without any."""
    if not columns:
        return 0.0
    chars = sum(max(len(cell) for cell in cells.values()) + 2 for _, cells in columns)
    return chars * 9 * 0.62 / 72 + 0.45


def side_columns(ax: Any, rows: Sequence[str], columns: Sequence[tuple[str, Mapping[str, str]]]) -> None:
    """Text columns on the right of the axes, a cell per row (a system's group letters), their
    headers as the right-hand label, drawn as a second y axis (``side_width`` is its room)."""
    if not columns:
        return
    widths = [max(len(cell) for cell in cells.values()) for _, cells in columns]
    right = ax.twinx()
    right.set_ylim(ax.get_ylim())
    cells = [
        "  ".join(
            found.get(name, "-").ljust(width) for (_, found), width in zip(columns, widths, strict=True)
        )
        for name in rows
    ]
    right.set_yticks(range(len(rows)), cells, family="monospace", fontsize=9)
    right.tick_params(axis="y", length=0)
    headers = " | ".join(header for header, _ in columns if header)
    right.set_ylabel("groups" + (f": {headers}" if headers else ""), fontsize=8, rotation=270, labelpad=12)


@dataclass(frozen=True)
class Picture:
    """A figure with its file name (report.md's PNG beside it) and its one-line caption."""

    name: str
    caption: str
    figure: "Figure"
