"""The report's figures (matplotlib, Agg): agreement against a varied factor, per-dimension
correlations, per-referee agreement, each with its title. Each builder returns a figure, or
None when the runs give nothing to plot; ``save_png`` writes one for report.md,
``svg_data_uri`` inlines one in HTML."""

import base64
import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from chateval.core.textfile import write_bytes
from chateval.reporting.metrics_view import DirectView, PairwiseView, run_view
from chateval.reporting.plot_style import TITLE_POINTS
from chateval.schema.agreement import CorrelationInterval, DirectMetrics, Interval, PairwiseMetrics

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from chateval.run.finished import FinishedRun

# Every figure's title (a PNG beside report.md is read alone), as the systems' pictures have it.
TITLE = {"fontsize": TITLE_POINTS, "fontweight": "bold"}
AGREEMENT: tuple[Literal["accuracy", "kappa"], ...] = ("accuracy", "kappa")
CORRELATIONS: tuple[Literal["spearman", "kendall"], ...] = ("spearman", "kendall")


def _use_agg() -> None:
    """Draw without a screen (a GPU node has none): before pyplot is first imported."""
    import matplotlib

    matplotlib.use("Agg")


def _subplots(ncols: int, figsize: tuple[float, float]) -> tuple["Figure", Any]:
    """A figure with one row of ``ncols`` axes. The axes are ``Any`` in matplotlib's own types
    (one Axes, or an array of them, depending on the grid)."""
    _use_agg()
    import matplotlib.pyplot as plt

    return plt.subplots(1, ncols, figsize=figsize)


def _close(fig: "Figure") -> None:
    _use_agg()
    import matplotlib.pyplot as plt

    plt.close(fig)


def _error_bars(intervals: Sequence[Interval | CorrelationInterval]) -> tuple[list[float], list[list[float]]]:
    """Values and their (below, above) distances to the 95% interval's ends. An undefined
    value is NaN, which matplotlib leaves out (a 0 bar would read as "no association"); a
    missing interval has no bar."""
    values = [math.nan if m["value"] is None else m["value"] for m in intervals]
    ends = [m["ci95"] or [v, v] for v, m in zip(values, intervals, strict=True)]
    below = [v - low for v, (low, _) in zip(values, ends, strict=True)]
    above = [high - v for v, (_, high) in zip(values, ends, strict=True)]
    return values, [below, above]


def _factor(run: "FinishedRun", name: str) -> str | int:
    """One of the run's design factors from run.json: its strategy, referees or rounds."""
    info = run.info
    factors: dict[str, str | int] = {
        "strategy": info["strategy"],
        "agents": info["agents"],
        "rounds": info["rounds"],
    }
    return factors[name]


def agreement_vs(runs: Sequence["FinishedRun"], key: str, xlabel: str) -> "Figure | None":
    """Accuracy and kappa (with CI bars) against ``key`` (agents or rounds), if it varies."""
    scored = [
        (r, view.panel)
        for r in runs
        if isinstance(view := run_view(r), PairwiseView) and view.panel is not None
    ]
    # Hold the other factors (strategy, and agents or rounds) at their most common value, so
    # the curve shows one factor at a time.
    other = "rounds" if key == "agents" else "agents"
    for factor in ("strategy", other):
        values = [_factor(r, factor) for r, _ in scored]
        if values:
            common = max(set(values), key=values.count)
            scored = [(r, panel) for r, panel in scored if _factor(r, factor) == common]
    points = sorted(((int(_factor(r, key)), panel) for r, panel in scored), key=lambda p: p[0])
    if len({x for x, _ in points}) < 2:
        return None
    fig, axes = _subplots(2, figsize=(9, 3.5))
    for ax, metric in zip(axes, AGREEMENT, strict=True):
        xs = [x for x, _ in points]
        ys, errs = _error_bars([p[metric] for _, p in points])
        ax.errorbar(xs, ys, yerr=errs, marker="o", capsize=4)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(metric)
        ax.set_xticks(xs)
        ax.grid(alpha=0.3)
    fig.suptitle(f"Accuracy and kappa vs {xlabel}", **TITLE)
    fig.tight_layout()
    return fig


def dimension_correlations(runs: Sequence["FinishedRun"]) -> "Figure | None":
    """Per-dimension Spearman and Kendall bars (with CI bars) of the direct runs."""
    direct = [(r, view.panel) for r in runs if isinstance(view := run_view(r), DirectView) and view.panel]
    if not direct:
        return None
    dims = list(direct[0][1]["dimensions"])
    fig, axes = _subplots(2, figsize=(10, 3.8))
    width = 0.8 / len(direct)
    missing: CorrelationInterval = {"value": None, "ci95": None}  # a dimension this run did not score: no bar
    for ax, key in zip(axes, CORRELATIONS, strict=True):
        for k, (run, panel) in enumerate(direct):
            found = panel["dimensions"]
            ys, errs = _error_bars([found[d][key] if d in found else missing for d in dims])
            xs = [i + k * width for i in range(len(dims))]
            ax.bar(xs, ys, width, yerr=errs, capsize=3, label=run.name)
        ax.set_xticks([i + width * (len(direct) - 1) / 2 for i in range(len(dims))], dims, rotation=15)
        ax.set_ylabel(key)
        ax.axhline(0, color="black", linewidth=0.8)
    axes[0].legend(fontsize=7)
    fig.suptitle("Correlation with human scores per dimension", **TITLE)
    fig.tight_layout()
    return fig


def _accuracy(metrics: PairwiseMetrics | None) -> Interval | None:
    return metrics["accuracy"] if metrics else None


def _rho(metrics: DirectMetrics | None) -> CorrelationInterval | None:
    """The average Spearman; None without one (no human scores, no defined dimension)."""
    average = metrics.get("average") if metrics else None
    return average.get("spearman") if average else None


def referee_agreement(runs: Sequence["FinishedRun"]) -> "Figure | None":
    """Each referee's own agreement with the humans (accuracy, or average Spearman for direct
    runs), with CI bars, next to the panel's: does the debate beat its best member? (An
    imported judge alone is its panel: one bar.)"""
    bars: list[tuple[str, Interval | CorrelationInterval]] = []
    views = [(run, run_view(run)) for run in runs]
    for run, view in views:
        prefix = f"{run.name}: " if len(runs) > 1 else ""
        members: list[tuple[str, Interval | CorrelationInterval | None]]
        if isinstance(view, PairwiseView):
            members = [
                ("panel", _accuracy(view.panel)),
                *((n, _accuracy(m)) for n, m in (view.metrics.get("referees") or {}).items()),
            ]
        else:
            members = [
                ("panel", _rho(view.panel)),
                *((n, _rho(m)) for n, m in (view.metrics.get("referees") or {}).items()),
            ]
        if view.imported is not None and view.imported.one_judge:
            members = members[:1]
        bars += [(prefix + name, found) for name, found in members if found]
    if len(bars) < 2:
        return None
    direct = isinstance(views[0][1], DirectView)
    fig, ax = _subplots(1, figsize=(7, 0.45 * len(bars) + 1.2))
    values, errs = _error_bars([m for _, m in bars])
    ax.barh(range(len(bars)), values, xerr=errs, capsize=3, color="#6a8fbf")
    ax.set_yticks(range(len(bars)), [name for name, _ in bars])
    ax.invert_yaxis()
    ax.set_xlabel("average Spearman rho vs humans" if direct else "accuracy vs humans")
    ax.axvline(0, color="black", linewidth=0.8)
    ax.grid(axis="x", alpha=0.3)
    fig.suptitle("Each referee's agreement with humans, and the panel's", **TITLE)
    fig.tight_layout()
    return fig


def save_png(fig: "Figure", path: Path) -> None:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=120)
    write_bytes(path, buffer.getvalue())  # atomic and private, as every file chateval writes
    _close(fig)


def svg_data_uri(fig: "Figure") -> str:
    """The figure as an SVG data URI, for an <img> in a page that loads nothing else."""
    import matplotlib

    buffer = io.BytesIO()
    # No date and fixed element ids (matplotlib salts them at random): the same run, the same page.
    with matplotlib.rc_context({"svg.hashsalt": "chateval"}):
        fig.savefig(buffer, format="svg", metadata={"Date": None})
    _close(fig)
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
