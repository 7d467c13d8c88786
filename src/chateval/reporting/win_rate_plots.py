"""Win rates as pictures: the pairwise matrix as a heatmap with its numbers in the cells, each
system's win rate against the field (or against the baseline, raw and length-controlled) as bars
with 95% intervals, and with categories each system's win rate per category (against the
baseline in a run with one). Each picture's title and axis say against whom: the field, or the
baseline. Read from metrics.json (the ``systems`` section and the ``categories`` measure):
nothing is refit."""

from collections.abc import Mapping, Sequence
from typing import Any

from chateval.evaluation.categories import baseline_pairs
from chateval.reporting.plot_style import (
    BLACK,
    BLUE,
    HATCHES,
    ORANGE,
    Margins,
    Picture,
    Point,
    Series,
    figure,
    interval_rows,
    legend_below,
    legend_rows,
    rows_height,
    text_width,
)
from chateval.schema.run_metrics import PairwiseSystems
from chateval.schema.systems import PERCENTILE_BOOTSTRAP

# A win rate's interval method (proportion_interval.Method) in a caption's words.
METHODS = {
    "wilson-cluster": "Wilson with a prompt-clustered design effect, t quantile",
    "clopper-pearson-prompts": "exact binomial, each prompt one unit",
    "clopper-pearson-independent": "exact binomial, comparisons taken as independent",
    "wilson-independent": "Wilson, comparisons taken as independent",
    "t-cluster": "t, prompt-clustered",
    PERCENTILE_BOOTSTRAP: "bootstrap over prompts",
}


def interval_words(intervals: Sequence[Mapping[str, Any]]) -> str:
    """How these win rates' intervals were made (a field or category rate of an earlier
    release, which names no method, was a bootstrap over prompts)."""
    said = dict.fromkeys(METHODS[str(i.get("method", PERCENTILE_BOOTSTRAP))] for i in intervals)
    return "; ".join(said)


def system_order(section: PairwiseSystems) -> list[str]:
    """The systems in the leaderboard's rank order, else as the win rates list them."""
    board = section.get("leaderboard")
    if board:
        ranked = [row["system"] for row in sorted(board["rows"], key=lambda row: row["rank"])]
        return ranked + [s for s in section["win_rates"]["systems"] if s not in ranked]
    return list(section["win_rates"]["systems"])


def matrix_picture(section: PairwiseSystems, name: str, prefix: str) -> Picture | None:
    """The win rate of each row's system against each column's (ties half), its value written
    in the cell; blank where two systems never met. None with fewer than two systems."""
    import numpy as np

    order = system_order(section)
    if len(order) < 2:
        return None
    index = {system: i for i, system in enumerate(order)}
    values = np.full((len(order), len(order)), np.nan)
    for pair in section["win_rates"]["pairs"]:
        rate = pair["win_rate"]["value"]
        if rate is None:
            continue
        a, b = index[pair["system_a"]], index[pair["system_b"]]
        values[a, b], values[b, a] = rate, 1.0 - rate
    side = max(2.0, 0.42 * len(order))
    labels = text_width(order, 8)
    # x labels at 40 degrees take sin(40) of their length below; the colour bar sits right.
    margins = Margins(left=labels + 0.55, right=1.1, bottom=0.64 * labels + 0.6, top=0.15)
    fig, axes = figure(
        1, 1, (side, side), margins, title=f"{prefix}Win rate of each row's system against each column's"
    )
    ax = axes[0][0]
    # cividis: colour-blind-safe and darker for lower rates, so grey print keeps the order.
    # (NaN, never met: no colour, the cell stays blank.)
    shown = ax.imshow(values, cmap="cividis", vmin=0.0, vmax=1.0)
    size = 9 if len(order) <= 8 else (7 if len(order) <= 14 else 6)
    for (i, j), value in np.ndenumerate(values):
        if i == j:
            ax.text(j, i, "-", ha="center", va="center", fontsize=size, color="0.4")
        elif not np.isnan(value):
            colour = "white" if value < 0.55 else BLACK  # the map is dark below about 0.55
            ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=size, color=colour)
    ax.set_xticks(range(len(order)), order, rotation=40, ha="right", fontsize=8)
    ax.set_yticks(range(len(order)), order, fontsize=8)
    ax.set_xlabel("against (column)")
    ax.set_ylabel("win rate of (row)")
    width, height = fig.get_size_inches()
    bar = fig.add_axes((1 - 0.85 / width, margins.bottom / height, 0.15 / width, side / height))
    fig.colorbar(shown, cax=bar, label="win rate, ties half")
    caption = (
        f"{prefix}Win rates: the row system's win rate against the column system over their "
        f"comparisons (ties half; {section['win_rates']['comparisons']} panel decisions); cells "
        "carry no interval (the win rates table has them), blank where two systems never met."
    )
    return Picture(name, caption, fig)


def _point(interval: Mapping[str, Any] | None) -> Point | None:
    if not interval or interval.get("value") is None:
        return None
    value = float(interval["value"])
    low, high = interval.get("ci95") or (value, value)
    return value, float(low), float(high)


def _bars(ax: Any, order: Sequence[str], series: Sequence[tuple[str, Mapping[str, Point]]]) -> None:
    """Horizontal bars with 95% interval whiskers, a hatch and colour per series (hatches carry
    the difference in grey print), 0.5 marked."""
    height = 0.8 / len(series)
    colours = (BLUE, ORANGE)
    for k, (label, points) in enumerate(series):
        rows = [(i, points[name]) for i, name in enumerate(order) if name in points]
        ys = [i + (k - (len(series) - 1) / 2) * height for i, _ in rows]
        xs = [value for _, (value, _, _) in rows]
        errors = [[v - low for _, (v, low, _) in rows], [high - v for _, (v, _, high) in rows]]
        ax.barh(
            ys,
            xs,
            height * 0.92,
            xerr=errors,
            color=colours[k % len(colours)],
            hatch=HATCHES[k % len(HATCHES)],
            edgecolor=BLACK,
            linewidth=0.6,
            error_kw={"elinewidth": 1.2, "capsize": 2.5, "ecolor": BLACK},
            label=label,
        )
    ax.set_yticks(range(len(order)), order)
    ax.set_ylim(len(order) - 0.5, -0.5)
    ax.set_xlim(0, 1.02)  # an interval reaching 1 keeps its cap
    ax.axvline(0.5, color="0.2", linewidth=0.9, linestyle="--")
    ax.grid(axis="x", alpha=0.35)
    ax.set_axisbelow(True)


def bars_picture(section: PairwiseSystems, name: str, prefix: str) -> Picture | None:
    """Each system's win rate against the baseline (raw and length-controlled) when the run had
    one, else against the field, as bars with 95% intervals."""
    order = system_order(section)
    against = section.get("against_baseline")
    if against:
        rows = against["rows"]
        raw = {r["system"]: p for r in rows if (p := _point(r["win_rate"])) is not None}
        controlled = {r["system"]: p for r in rows if (p := _point(r["lc_win_rate"])) is not None}
        series = [("raw", raw)] + ([("length-controlled", controlled)] if controlled else [])
        order = [s for s in order if s in raw]
        methods = interval_words([r["win_rate"] for r in rows])
        rival = f"the baseline {against['baseline']}"
        what = (
            f"Win rate against {rival} (ties half), raw"
            + (
                " (plain bars) and length-controlled (hatched; AlpacaEval 2's model, sandwich "
                "interval with a t quantile)"
                if controlled
                else ""
            )
            + f", with 95% intervals (raw: {methods})"
            + "".join(
                f"; {r['system']}: length-controlled {r['lc_reason']}" for r in rows if "lc_reason" in r
            )
        )
    else:
        overall = section["win_rates"]["overall"]
        series = [
            (
                "against the field",
                {r["system"]: p for r in overall if (p := _point(r["win_rate"])) is not None},
            )
        ]
        methods = interval_words([r["win_rate"] for r in overall])
        rival = "the field"
        what = f"Win rate against the field (every opponent, ties half) with 95% intervals ({methods})"
    if not order or not series[0][1]:
        return None
    legend = legend_rows(len(series), 2) if len(series) > 1 else 0.0
    margins = Margins(left=text_width(order) + 0.2, right=0.3, bottom=0.6 + legend)
    panel = (5.5, rows_height(len(order), len(series)))
    fig, axes = figure(1, 1, panel, margins, title=f"{prefix}Win rate against {rival}")
    ax = axes[0][0]
    _bars(ax, order, series)
    ax.set_xlabel(f"win rate against {rival} (ties half); dashed: 0.5, an even record")
    if len(series) > 1:
        legend_below(fig, ax, 2)
    return Picture(name, f"{prefix}{what}; the dashed line marks 0.5.", fig)


def _category_points(entry: Mapping[str, Any]) -> tuple[dict[str, Point], list[Mapping[str, Any]]]:
    """A category's systems' win rates as points, and their intervals: against the run's
    baseline where it has one (the baseline itself has no point), else against the field."""
    systems = entry["systems"]
    if "baseline" in systems:
        found = {name: pair["win_rate"] for name, pair in baseline_pairs(systems).items()}
    else:
        found = {row["system"]: row["win_rate"] for row in systems["rows"]}
    return {name: p for name, rate in found.items() if (p := _point(rate)) is not None}, list(found.values())


def categories_picture(
    categories: Mapping[str, Any], order: Sequence[str], name: str, prefix: str
) -> Picture | None:
    """Each system's win rate within each category (against the run's baseline where it has
    one, else against the field), a panel per category on a shared scale; None when no
    category has systems' rows."""
    entries = [e for e in categories.get("categories", []) if (e.get("systems") or {}).get("rows")]
    if not entries:
        return None
    baselines = list(dict.fromkeys(e["systems"]["baseline"] for e in entries if "baseline" in e["systems"]))
    rival = f"the baseline {', '.join(baselines)}" if baselines else "the field"
    names = list(order) + [
        row["system"] for e in entries for row in e["systems"]["rows"] if row["system"] not in order
    ]
    names = [n for n in dict.fromkeys(names) if n not in baselines]
    columns = min(4, len(entries))
    grid = -(-len(entries) // columns)
    margins = Margins(left=text_width(names) + 0.2, right=0.25, bottom=0.6, top=0.35)
    panel = (2.4, rows_height(len(names), 1))
    title = f"{prefix}Win rate per category against {rival}"
    fig, axes = figure(grid, columns, panel, margins, (0.2, 0.75), title, sharex=True, sharey=True)
    intervals = []
    for k, entry in enumerate(entries):
        ax = axes[k // columns][k % columns]
        points, rates = _category_points(entry)
        intervals += rates
        interval_rows(ax, names, [Series("win rate", points, BLUE, "o")])
        ax.axvline(0.5, color="0.2", linewidth=0.9, linestyle="--")
        ax.set_xlim(-0.03, 1.03)  # an interval reaching 0 or 1 keeps its cap
        ax.set_xticks((0, 0.25, 0.5, 0.75, 1), ("0", "", "0.5", "", "1"))  # panels side by side: no overlap
        ax.set_title(f"{entry['category']} ({entry['items']} items)", fontsize=9)
    for k in range(len(entries), grid * columns):
        axes[k // columns][k % columns].set_visible(False)
    fig.supxlabel(f"win rate against {rival}, ties half; dashed: 0.5", fontsize=9, y=0.02, va="bottom")
    caption = (
        f"{prefix}Win rates per category: each system's win rate against {rival}"
        + ("" if baselines else " (every opponent)")
        + " on the category's comparisons alone (ties half), with 95% intervals "
        f"({interval_words(intervals)})."
    )
    return Picture(name, caption, fig)
