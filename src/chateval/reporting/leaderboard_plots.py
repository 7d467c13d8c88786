"""The leaderboard as a picture: each system's rating with its 95% interval on one axis, the
plain, length-controlled and calibrated ratings side by side, the systems the board does not
tell apart sharing a group letter; the runs of one report on the same axis. A direct run's
systems get their mean scores per dimension the same way. Everything is read from metrics.json's
``systems`` section (chateval.evaluation.systems.section): the reporting layer refits nothing."""

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from chateval.evaluation.systems.davidson_intervals import CLUSTERED, INDEPENDENT
from chateval.evaluation.systems.tables import joint_level
from chateval.reporting.imported_runs import labelled_title, labels_kind, shared_kind
from chateval.reporting.metrics_view import run_view
from chateval.reporting.plot_style import (
    BLUE,
    GREEN,
    LINE_STYLES,
    MARKERS,
    PALETTE,
    VERMILLION,
    Margins,
    Picture,
    Point,
    Series,
    figure,
    interval_rows,
    legend_below,
    legend_rows,
    rows_height,
    side_columns,
    side_width,
    text_width,
)
from chateval.reporting.system_groups import group_letters
from chateval.schema.agreement import Interval
from chateval.schema.systems import PERCENTILE_BOOTSTRAP, Leaderboard

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from chateval.run.finished import FinishedRun

Board = Mapping[str, Any]  # a leaderboard of metrics.json, plain or calibrated

# Each kind of rating: its key in the systems section, its name, its colour and marker when a
# single run is drawn (several runs take a colour and line style each, the kind keeps its marker).
KINDS = (
    ("leaderboard", "plain", BLUE, "o"),
    ("length_controlled", "length-controlled", VERMILLION, "s"),
    ("calibrated_leaderboard", "calibrated by human labels", GREEN, "D"),
)
MARKER_WORDS = {"o": "circles", "s": "squares", "D": "diamonds"}


def _board_points(board: Board) -> dict[str, Point]:
    return {row["system"]: (row["rating"], *row["ci95"]) for row in board["rows"]}


def _method(board: Board, kind: str) -> str:
    """How this board's intervals were made, in a few words."""
    if kind == "calibrated_leaderboard":
        return "calibrated: PPI++, t quantile"
    method = board["interval_method"]
    if method == CLUSTERED:
        return "prompt-clustered, t quantile"
    if method == INDEPENDENT:
        return "model-based: comparisons taken as independent, under 5 prompts"
    return "bootstrap over prompts"


def _order(boards: Sequence[Board]) -> list[str]:
    """Systems in the first board's rank order, then any the later boards add."""
    names: list[str] = []
    for board in boards:
        names += [
            row["system"]
            for row in sorted(board["rows"], key=lambda r: r["rank"])
            if row["system"] not in names
        ]
    return names


def _letters(board: Board, order: Sequence[str]) -> dict[str, str] | None:
    """The board's group letters (None: a run before release 5 recorded no resolved pairs)."""
    if board.get("resolved") is None:
        return None
    mine = [name for name in order if any(row["system"] == name for row in board["rows"])]
    return group_letters(mine, board.get("resolved") or [])


def leaderboard_picture(runs: Sequence["FinishedRun"]) -> Picture | None:
    """Every pairwise run's leaderboards on one axis; None when no run has one."""
    boards: list[tuple[int, str, str, Board]] = []  # run's place, its name, kind, board
    for k, run in enumerate(runs):
        section = run_view(run).systems
        if not section or section["task"] != "pairwise":
            continue
        for kind, *_ in KINDS:
            found = cast(Board | None, section.get(kind))  # a TypedDict read by a variable key
            if found:
                boards.append((k, run.name, kind, found))
    if not boards:
        return None
    # Runs are told apart by their place: two runs of one config share a name.
    placed = list(dict.fromkeys(k for k, _, _, _ in boards))
    several = len(placed) > 1
    order = _order([board for _, _, kind, board in boards if kind == "leaderboard"] or [boards[0][3]])
    order += [name for *_, board in boards for name in _order([board]) if name not in order]
    anchors = {str(board.get("anchor")) for *_, board in boards}
    # A single run's anchor is marked in its row's label; several runs may have several.
    tick = {name: f"{name} (anchor)" if name in anchors and not several else name for name in order}
    series = []
    labels = shared_kind(labels_kind(run.info) for run in runs)  # "calibrated by (human) labels"
    for k, run_name, kind, board in boards:
        _, words, colour, marker = next(found for found in KINDS if found[0] == kind)
        words = labelled_title(words, labels)
        r = placed.index(k)
        series.append(
            Series(
                f"run {r + 1} ({run_name}): {words}" if several else words,
                {tick[name]: point for name, point in _board_points(board).items()},
                PALETTE[r % len(PALETTE)] if several else colour,
                marker,
                LINE_STYLES[r % len(LINE_STYLES)] if several else "-",
            )
        )
    # The plain boards' letters only: a length-controlled board's, beside them, doubled the
    # columns and read as a second grouping to reconcile (its resolved pairs are in the table).
    # Headed by the run's place (its name can be long, and two runs can share one).
    columns = [
        (
            f"run {placed.index(k) + 1}" if several else "",
            {tick[name]: cell for name, cell in letters.items()},
        )
        for k, _, kind, board in boards
        if kind == "leaderboard" and (letters := _letters(board, order))
    ]
    rows = [tick[name] for name in order]
    legend = min(len(placed), 4) if several else 3  # a legend column per run (filled down)
    title = "Leaderboard: ratings with 95% intervals" + (", every run on one axis" if several else "")
    fig, ax = _rows_figure(rows, len(series), legend, side_width(columns), title)
    interval_rows(ax, rows, series)
    side_columns(ax, rows, columns)
    ax.axvline(1000, color="0.3", linewidth=0.8, linestyle=":")
    ax.set_xlabel("rating: 1000 = the anchor; +400 = 10 to 1 odds of winning")
    legend_below(fig, ax, legend)
    kinds = [found for found in KINDS if any(kind == found[0] for _, _, kind, _ in boards)]
    methods = "; ".join(dict.fromkeys(_method(board, kind) for _, _, kind, board in boards))
    # 95%, or an adaptive run's share of its design's 5% (``tables.joint_level``).
    levels = " or ".join(
        dict.fromkeys(
            joint_level(cast(Leaderboard, board)) for _, _, kind, board in boards if kind == "leaderboard"
        )
    )
    caption = (
        "Leaderboard: each system's rating (Davidson-Bradley-Terry"
        + (
            "; calibrated: Bradley-Terry, ties half"
            if any(kind == "calibrated_leaderboard" for _, _, kind, _ in boards)
            else ""
        )
        + ("; each run's own anchor at 1000" if several else f"; 1000 = the anchor, {next(iter(anchors))}")
        + f") with its 95% interval ({methods}); "
        + ", ".join(f"{MARKER_WORDS[marker]} {labelled_title(said, labels)}" for _, said, _, marker in kinds)
        + (
            f"; systems sharing a letter are not told apart (no plain rating difference resolved, {levels} "
            "jointly" + ("; a column of letters per run, in the order named)." if several else ").")
            if columns
            else "."
        )
    )
    return Picture("leaderboard", caption, fig)


def _rows_figure(
    rows: Sequence[str], series: int, legend_columns: int, right: float, title: str
) -> tuple["Figure", Any]:
    """One panel of a row per system under ``title``, room for the labels left, ``right``
    inches of side columns, the axis label and the series' legend below."""
    margins = Margins(
        left=text_width(rows) + 0.2,
        right=max(right, 0.25),
        bottom=0.6 + legend_rows(series, legend_columns),
    )
    fig, axes = figure(1, 1, (6.0, rows_height(len(rows), series)), margins, title=title)
    return fig, axes[0][0]


def _mean_point(mean: Interval) -> Point | None:
    value, ci = mean["value"], mean["ci95"]
    if value is None:
        return None
    low, high = ci if ci else (value, value)
    return value, low, high


def means_picture(runs: Sequence["FinishedRun"]) -> Picture | None:
    """Every direct run's mean score per system and dimension on one axis; None without any."""
    found = []
    for run in runs:
        section = run_view(run).systems
        if section and section["task"] == "direct" and section["scores"]["means"]:
            found.append((run, section["scores"]))
    if not found:
        return None
    several = len(found) > 1
    order = list(dict.fromkeys(name for _, scores in found for name in scores["systems"]))
    dimensions = list(dict.fromkeys(d for _, scores in found for d in scores["dimensions"]))
    series = []
    for r, (run, scores) in enumerate(found):
        for dimension in scores["dimensions"]:
            d = dimensions.index(dimension)
            points = {
                m["system"]: point
                for m in scores["means"]
                if m["dimension"] == dimension and (point := _mean_point(m["mean"])) is not None
            }
            label = f"{run.name}: {dimension}" if several else dimension
            style = LINE_STYLES[r % len(LINE_STYLES)]
            series.append(Series(label, points, PALETTE[d % len(PALETTE)], MARKERS[d % len(MARKERS)], style))
    title = "Mean score per system and dimension" + (", every run on one axis" if several else "")
    fig, ax = _rows_figure(order, len(series), 4, 0.25, title)
    interval_rows(ax, order, series)
    ax.set_xlabel("mean score")
    legend_below(fig, ax, 4)
    methods = ", ".join(
        dict.fromkeys(
            "Wilson's on the scale at the prompts' effective count, t quantile"
            if scores["method"] != PERCENTILE_BOOTSTRAP
            else f"{scores.get('resamples')} bootstrap resamples of the prompts"
            for _, scores in found
        )
    )
    caption = (
        "Mean score per system and dimension"
        + (", every run on one axis" if several else "")
        + f", with 95% intervals over prompts ({methods})."
    )
    return Picture("mean_scores", caption, fig)
