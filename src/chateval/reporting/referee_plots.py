"""What the referees scored, as a picture: per referee, the distribution of the scores it gave to
the answer shown first and to the answer shown second, over every item and answer order, so a
panel that gives everything 10, or favours the first answer, shows at a glance. Read from the
run's verdicts.jsonl (each order's referee rows), the scale from its config."""

import math
from collections import Counter
from typing import TYPE_CHECKING

from chateval.record.roster import speakers
from chateval.reporting.plot_style import BLACK, BLUE, HATCHES, ORANGE, Margins, Picture, figure, title_height
from chateval.schema.verdicts import VerdictRecord

if TYPE_CHECKING:
    from chateval.run.finished import FinishedRun

COLUMNS = 3  # referees side by side before the panels wrap
POSITIONS = ("answer shown first", "answer shown second")


def position_scores(records: list[VerdictRecord]) -> dict[str, tuple[Counter[float], Counter[float]]]:
    """Per referee, how often it gave each score to the answer shown first and to the one shown
    second (a row's ``score_a`` is A's whichever order showed it: swapped, A was second).
    Failed verdicts and rows without scores (imported winners) count for nothing."""
    found: dict[str, tuple[Counter[float], Counter[float]]] = {}
    for record in records:
        for order in record.get("orders", []):
            for row in order["referees"]:
                if row.get("error") or "score_a" not in row or "score_b" not in row:
                    continue
                first, second = found.setdefault(row["agent"], (Counter(), Counter()))
                a, b = row["score_a"], row["score_b"]
                shown_first, shown_second = (b, a) if order["swapped"] else (a, b)
                first[shown_first] += 1
                second[shown_second] += 1
    return found


def _mean(counts: Counter[float]) -> float:
    return sum(score * n for score, n in counts.items()) / max(sum(counts.values()), 1)


def _bars_as_steps(
    values: list[float], shares: list[float], side: int, width: float = 0.4
) -> tuple[list[float], list[float]]:
    """Bars of ``width`` left (``side`` 0) or right (1) of each value, as the heights and edges
    of one step outline with empty gaps: one patch for all of a position's bars instead of one
    per bar, which cost a report most of this picture's time."""
    heights: list[float] = []
    edges: list[float] = []
    for value, share in zip(values, shares, strict=True):
        left = value - width + width * side
        edges += [left, left + width]
        heights += [share, 0.0]
    return heights[:-1], edges


def referee_scores_picture(run: "FinishedRun", name: str, prefix: str) -> Picture | None:
    """A panel per referee: the share of its scores at each value of the scale, shown first
    (solid) against shown second (hatched); None when the run recorded no pairwise scores."""
    if run.task != "pairwise":
        return None
    found = position_scores(run.verdicts())
    if not found:
        return None
    low, high = run.config.verdict.low, run.config.verdict.high
    seen = [s for first, second in found.values() for s in (*first, *second)]
    # Every whole score of the scale, and any score off it or between (half points) that was given.
    whole = range(math.floor(min(low, *seen)), math.ceil(max(high, *seen)) + 1)
    values: list[float] = sorted({*whole, *seen})
    width = 0.4 if all(float(v).is_integer() for v in values) else 0.2
    models = {agent: model for agent, (_, model) in speakers(run.roster).items()}
    columns = min(COLUMNS, len(found))
    grid = math.ceil(len(found) / columns)
    panel = (max(2.4, 0.28 * len(values)), 2.0)
    margins = Margins(left=0.75, right=0.2, bottom=0.5, top=0.85)  # top: the legend, two-line titles
    title = f"{prefix}Scores each referee gave, by the answer's position"
    fig, axes = figure(grid, columns, panel, margins, gap=(0.3, 1.1), title=title, sharey=True)
    for k, (agent, (first, second)) in enumerate(found.items()):
        ax = axes[k // columns][k % columns]
        for j, counts in enumerate((first, second)):
            total = sum(counts.values())
            heights, edges = _bars_as_steps(values, [counts.get(v, 0) / total for v in values], j, width)
            ax.stairs(
                heights,
                edges,
                baseline=0,
                fill=True,
                facecolor=(BLUE, ORANGE)[j],
                hatch=HATCHES[j],
                edgecolor=BLACK,
                linewidth=0.5,
                label=POSITIONS[j],
            )
        model = models.get(agent)
        ax.set_title(
            f"{agent}" + (f" ({model})" if model else "") + f"\n{sum(first.values())} verdicts; mean "
            f"{_mean(first):.1f} first, {_mean(second):.1f} second",
            fontsize=9,
        )
        ax.set_xticks(values)
        ax.set_xlabel("score")
        ax.grid(axis="y", alpha=0.35)
        ax.set_axisbelow(True)
    for k in range(len(found), grid * columns):
        axes[k // columns][k % columns].set_visible(False)
    axes[0][0].set_ylabel("share of its scores")
    handles, labels = axes[0][0].get_legend_handles_labels()
    width, height = fig.get_size_inches()
    below_title = 1 - title_height(title, width) / height
    fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, below_title),
        ncols=2,
        fontsize=8,
        frameon=False,
    )
    caption = (
        f"{prefix}Referees: the scores each referee gave (scale {low}-{high}) to the answer shown "
        "first (solid) and shown second (hatched), over every item and answer order, as "
        "shares of its verdicts; counts, no intervals."
    )
    return Picture(name, caption, fig)
