"""The two tables' rows: the main table (a design at N systems and a budget, over many runs)
and the stops table (how often an adaptive run's "resolved" is false), each row seeded on its
own so that rows may run in any order or process; and how each is printed.
"""

import random
from dataclasses import dataclass

import numpy as np

from chateval.config.designs import CompareDesign
from simulations.designs.adaptive import ADAPTIVE, Adaptive
from simulations.designs.planted import SPREAD, planted, planted_ties
from simulations.designs.runs import one_run

COLUMNS = ["systems", "design", "budget", "comparisons", "prompts", "Kendall tau", "top-1", "top-3"]
COLUMNS += ["rating CI coverage", "CI width (points)", "win-rate CI coverage", "resolved", "false resolved"]
STOP_COLUMNS = ["systems", "spread", "equal", "design", "budget", "runs", "comparisons", "resolved"]
STOP_COLUMNS += ["false resolved", "false shown", "false, plain 95% every wave", "top-1"]


def shown_share(row: dict[str, float | int | str], key: str) -> str:
    """A share in the row as a percentage; "-" where the row has none (a planned design)."""
    return f"{float(row[key]):.1%}" if key in row else "-"


@dataclass(frozen=True)
class StopJob:
    """One row of the ``stops`` table: ``runs`` runs of the adaptive ``design`` at ``systems``
    systems evenly spaced over ``spread``; with ``tied`` ("best" or "middle"), two of them made
    equal, so that every "resolved" of the design testing them (top_k 1 for the best two, the
    whole order for the middle two) is false; "all": every system equal, so that every claim is
    (the module doc)."""

    systems: int
    spread: float
    tied: str | None
    design: Adaptive
    budget: int
    runs: int


def stop_jobs(repetitions: int) -> list[StopJob]:
    """The stops table's rows, ``repetitions`` runs each (none for 0)."""
    if repetitions <= 0:
        return []
    both = [Adaptive(), Adaptive(1)]
    chosen = {"best": [Adaptive(1)], "middle": [Adaptive()], None: both, "all": both}
    return [
        StopJob(systems, spread, tied, design, budget, repetitions)
        for systems, spread, tied, budgets in STOP_SETTINGS
        for design in chosen[tied]
        for budget in budgets
    ]


def stop_row(job: StopJob) -> dict[str, float | int | str]:
    """How often the adaptive design stops resolved, after how many comparisons, how often its
    claim is false, and how often anything the run shows (or plain lists after every wave
    would show) is (each run seeded by the setting and its number alone)."""
    runs = []
    for rep in range(job.runs):
        rng = random.Random(f"stops:{job.systems}:{job.spread}:{job.tied}:{rep}")
        if job.tied is None:
            strengths = planted(job.systems, rng, job.spread)
        else:
            strengths = planted_ties(job.systems, job.tied, rng, job.spread)
        run = one_run(strengths, job.design, job.budget, rep, watch=True)
        if run is not None:
            runs.append(run)
    top_k = job.design.top_k
    return {
        "systems": job.systems,
        "spread": job.spread,
        "equal": job.tied or "none",
        "design": ADAPTIVE if top_k is None else f"{ADAPTIVE} top_k={top_k}",
        "budget": job.budget,
        "runs": len(runs),
        "comparisons": float(np.mean([r["comparisons"] for r in runs])),
        "resolved": float(np.mean([r["resolved"] for r in runs])),
        "false_resolved": float(np.mean([r["false_resolved"] for r in runs])),
        "false_shown": float(np.mean([r["false_shown"] for r in runs])),
        "false_watched": float(np.mean([r["false_watched"] for r in runs])),
        "top1": float(np.mean([r["top1"] for r in runs])),
    }


# The stops table's settings: (systems, spread, which are equal, budgets). 8 systems over the
# main table's spread: close neighbours, the stop rarely fires; 4 systems over a spread of 4
# (neighbours at odds of 3.8 to 1): it fires, so a false "resolved" can happen and is counted;
# all equal (spread 0): every claim, the final board's included, is false.
STOP_SETTINGS: list[tuple[int, float, str | None, list[int]]] = [
    (8, SPREAD, "best", [240, 480]),
    (8, SPREAD, "middle", [240, 480]),
    (4, 4.0, None, [120, 240]),
    (4, 4.0, "best", [120, 240]),
    (4, 4.0, "middle", [120, 240]),
    (4, 0.0, "all", [120, 240]),
    (8, 0.0, "all", [480]),
]


@dataclass(frozen=True)
class RowJob:
    """One row of the main table: ``repetitions`` runs, numbered from ``first``, of a design
    at N systems over ``spread`` and a budget."""

    systems: int
    label: str
    design: CompareDesign | Adaptive
    budget: int
    repetitions: int
    spread: float = SPREAD
    first: int = 0


def design_row(job: RowJob) -> dict[str, float | int | str] | None:
    """A main-table row (each run seeded by N and its number alone, so rows may run in any
    order or process)."""
    n, design, budget = job.systems, job.design, job.budget
    runs = []
    for rep in range(job.first, job.first + job.repetitions):
        run = one_run(planted(n, random.Random(f"{n}:{rep}"), job.spread), design, budget, seed=rep)
        if run is not None:
            runs.append(run)
    if not runs:
        return None
    row: dict[str, float | int | str] = {
        "systems": n,
        "design": job.label,
        "budget": budget,
        "repetitions": len(runs),
    }
    for key in runs[0]:
        row[key] = float(np.mean([r[key] for r in runs]))
    return row


def print_stop(row: dict[str, float | int | str]) -> None:
    """Print a stops-table row as Markdown."""
    print(
        f"| {row['systems']} | {row['spread']} | {row['equal']} | {row['design']} | {row['budget']} | "
        f"{row['runs']} | {row['comparisons']:.0f} | {shown_share(row, 'resolved')} | "
        f"{shown_share(row, 'false_resolved')} | {shown_share(row, 'false_shown')} | "
        f"{shown_share(row, 'false_watched')} | {shown_share(row, 'top1')} |",
        flush=True,
    )


def print_row(row: dict[str, float | int | str]) -> None:
    """Print a main-table row as Markdown."""
    print(
        f"| {row['systems']} | {row['design']} | {row['budget']} | {row['comparisons']:.0f} | "
        f"{row['prompts']:.0f} | {row['tau']:.3f} | {row['top1']:.0%} | {row['top3']:.0%} | "
        f"{row['coverage']:.1%} | {row['width']:.0f} | {row['win_rate_coverage']:.1%} | "
        f"{shown_share(row, 'resolved')} | {shown_share(row, 'false_resolved')} |",
        flush=True,
    )
