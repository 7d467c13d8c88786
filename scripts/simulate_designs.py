"""How well each comparison design recovers a planted ranking, per comparison spent, and whether
its intervals hold.

N systems get planted log-strengths evenly spaced over [-SPREAD/2, +SPREAD/2] (listed in a
shuffled order, so the design's system order says nothing about strength). For each design
(all_pairs; against a baseline, the median-strength system; opponents K; adaptive, for the whole
order and for the best 1 and 3) and each
budget of comparisons, the script builds the design's comparisons (data/designs.py, the code a
run uses, on as many prompts as the budget buys; adaptive: evaluation/adaptive_design.py, the
code a run uses, choosing from all pairs of a pool of POOL prompts in waves of max(2 N, 16)),
draws the panel's decisions from the Davidson model (the leaderboard's own model, ties with
nu = NU; ``davidson_simulation.simulate_davidson``), fits the leaderboard and the win rates,
and records:

- Kendall's tau between the fitted and the planted ratings (1: the order recovered exactly);
  ``comparisons``: the mean spent (an adaptive design may stop before its budget);
- top-1 and top-3: whether the fitted best system is a planted best (with two planted equal
  best, either) and whether the fitted best three, as a set, are the planted ones;
- rating coverage: the share of (repetition, system) cases whose 95% interval holds the
  planted rating (both relative to the anchor, which is left out: its interval is [1000, 1000]
  by definition), and the intervals' mean width in rating points;
- win-rate coverage: the share of (repetition, pair) cases whose 95% win-rate interval holds
  the pair's planted win rate (P(win) + P(tie) / 2 under the model);
- adaptive designs: ``resolved``, the share of runs that stopped resolved, and
  ``false_resolved``, the share that stopped resolved with a claim the truth denies: a pair the
  fit at the stopping look put one way (adjacent pairs of its order; with ``top_k``, every
  system of its best k against every other) that the planted strengths have equal or the other
  way round. Their leaderboards list ``resolved`` pairs at the final board's share of the
  design's 5% (``adaptive_design.LOOK_ALPHA``), as a run's do.

A second table (``stops``) asks whether the "resolved" claims of an adaptive run can be
trusted, 1,000 runs a row: at 8 systems over the same spread and at 4 systems over a spread
of 4 (neighbours at odds of 3.8 to 1, where the stop fires), with none, the best two or the
middle two made equal, and at 4 and 8 systems all equal. With two equal, every "resolved" of
the design testing them (top_k 1 for the best two, the whole order for the middle two) is a
false claim: ``false_resolved`` is the stop's error rate, which must stay at or under 5%;
``resolved`` and ``comparisons`` say how often and how early it stops where it may. What a
user reads if they watch every wave is counted too: ``false_shown``, the share of runs where
anything the run shows is false (the stop's claim, or a pair of the final board's
``resolved`` list that the truth has equal or the other way round; between the stop's looks
a run shows no claim), and, for contrast, ``false_watched``: the same for a plain 95% board
(``leaderboard``'s default) refit after every wave, the list an adaptive run does not show.
With all systems equal every claim is false, the board's included.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/simulate_designs.py --repetitions 400 \
        --stop-repetitions 1000 --workers 2 -o docs/performance/designs.json

prints Markdown tables (docs/performance.md) and writes the numbers as JSON: the main table at
400 repetitions a row, the stops table at 1,000 runs a row, in two processes (every row is
seeded on its own, so the rows do not depend on the process count). ``--first-repetition``
and ``--spread`` run the main table on other seeds or another spread: a check held out from
the settings the design was tuned on (docs/performance.md says which). Partial reruns write
into an existing file: ``--keep-stops`` keeps its stops table, ``--keep-rows`` its main-table
rows but those rerun (same systems, design and budget); each partial rerun is listed with its
arguments and seconds under ``settings.reruns``.
"""

import argparse
import itertools
import json
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from chateval.config.data import CompareDesign
from chateval.data.designs import comparisons_per_prompt, design_pairs
from chateval.evaluation.systems.adaptive_design import (
    LOOK_ALPHA,
    RESOLVED,
    TOP_K_RESOLVED,
    AdaptiveDesign,
    AdaptiveSettings,
    Candidate,
    simulate,
)
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.leaderboard import (
    RESOLVED_ALPHA,
    fit_board,
    leaderboard,
    resolved_pairs,
    shared_ranks,
)
from chateval.evaluation.systems.win_rates import win_rates

SPREAD = 2.0  # log-strength between the best and the worst system: odds of e^2 = 7.4 to 1
NU = 0.5  # Davidson's tie parameter: about 20% ties between equals
POOL = 80  # prompts the adaptive design may choose from (FairEval has 80 questions)
ADAPTIVE = "adaptive"


def planted(n: int, rng: random.Random, spread: float = SPREAD) -> dict[str, float]:
    """N systems named s01.. with evenly spaced log-strengths, in a shuffled listing order."""
    values = [spread * (i / (n - 1) - 0.5) for i in range(n)]
    rng.shuffle(values)
    return {f"s{i + 1:02d}": v for i, v in enumerate(values)}


@dataclass(frozen=True)
class Adaptive:
    """The adaptive design, resolving the whole order (``top_k`` None) or the best k."""

    top_k: int | None = None


def designs(n: int) -> list[tuple[str, CompareDesign | Adaptive]]:
    """The designs compared at N systems."""
    out: list[tuple[str, CompareDesign | Adaptive]] = [("all_pairs", CompareDesign())]
    out.append(("against median", CompareDesign(against="BASELINE")))
    for k in (2, 4):
        if k < n:
            out.append((f"opponents K={k}", CompareDesign(opponents=k)))
    out += [
        (ADAPTIVE, Adaptive()),
        (f"{ADAPTIVE} top_k=1", Adaptive(1)),
        (f"{ADAPTIVE} top_k=3", Adaptive(3)),
    ]
    return out


def planted_win_rate(strengths: dict[str, float], a: str, b: str) -> float:
    """P(a wins) + P(tie) / 2 under the Davidson model."""
    pa, pb = math.exp(strengths[a]), math.exp(strengths[b])
    tie = NU * math.sqrt(pa * pb)
    return (pa + tie / 2) / (pa + pb + tie)


def fixed_comparisons(
    strengths: dict[str, float], design: CompareDesign, budget: int, seed: int
) -> tuple[list[Comparison], str] | None:
    """A planned design's comparisons on as many prompts as ``budget`` buys, and its anchor."""
    systems = list(strengths)
    if design.against is not None:  # the median-strength system is the baseline
        design = CompareDesign(against=sorted(systems, key=strengths.__getitem__)[len(systems) // 2])
    prompts = budget // comparisons_per_prompt(design, len(systems))
    if prompts < 1:
        return None
    pairs = [(f"p{p}", a, b) for p in range(prompts) for a, b in design_pairs(design, systems, seed, f"p{p}")]
    return simulate_davidson(strengths, NU, pairs, np.random.default_rng(seed)), design.against or systems[0]


def planted_ties(n: int, tied: str, rng: random.Random, spread: float = SPREAD) -> dict[str, float]:
    """``planted`` with two systems made equal: the best two (``tied`` "best") or the middle
    two ("middle") take the mean of their two strengths; "all": every system equal."""
    values = sorted((spread * (i / (n - 1) - 0.5) for i in range(n)), reverse=True)
    if tied == "all":
        values = [0.0] * n
    else:
        first = 0 if tied == "best" else n // 2 - 1
        values[first] = values[first + 1] = (values[first] + values[first + 1]) / 2
    rng.shuffle(values)
    return {f"s{i + 1:02d}": v for i, v in enumerate(values)}


def false_claim(strengths: dict[str, float], order: list[str], top_k: int | None) -> bool:
    """Whether a "resolved" stop's claim about the fitted ``order`` (best first) is false: a
    claimed pair (adjacent ones; with ``top_k``, best k against the rest) that the planted
    strengths have equal or the other way round."""
    if top_k is None:
        claimed = list(itertools.pairwise(order))
    else:
        claimed = [(a, b) for a in order[:top_k] for b in order[top_k:]]
    return any(strengths[a] <= strengths[b] for a, b in claimed)


def false_pair(strengths: dict[str, float], resolved: list[list[str]]) -> bool:
    """Whether a board's ``resolved`` list ([higher, lower] pairs) holds a pair the planted
    strengths have equal or the other way round."""
    return any(strengths[higher] <= strengths[lower] for higher, lower in resolved)


@dataclass(frozen=True)
class AdaptiveOutcome:
    """One simulated adaptive run: its decided comparisons wave by wave, and the order its
    "resolved" stop claimed (None: it did not stop resolved)."""

    waves: list[list[Comparison]]
    claimed: list[str] | None

    @property
    def comparisons(self) -> list[Comparison]:
        """Every decided comparison, in the order decided."""
        return [c for wave in self.waves for c in wave]


def adaptive_comparisons(
    strengths: dict[str, float], design: Adaptive, budget: int, seed: int
) -> AdaptiveOutcome:
    """The adaptive design's comparisons, chosen from all pairs on POOL prompts."""
    systems = list(strengths)
    candidates = [
        Candidate(f"p{p}:{a}:{b}", f"p{p}", a, b)
        for p in range(POOL)
        for a, b in itertools.combinations(systems, 2)
    ]
    settings = AdaptiveSettings(budget, max(2 * len(systems), 16), design.top_k, seed)
    rng = np.random.default_rng(seed)

    def judge(wave: Sequence[Candidate]) -> list[Comparison | None]:
        return list(simulate_davidson(strengths, NU, [(c.prompt, c.system_a, c.system_b) for c in wave], rng))

    adaptive = AdaptiveDesign(candidates, systems, settings)
    decided = iter(simulate(adaptive, judge))  # in wave order
    waves = [[c for c in itertools.islice(decided, len(wave)) if c is not None] for wave in adaptive.waves]
    claimed = adaptive.stop_order if adaptive.stop in (RESOLVED, TOP_K_RESOLVED) else None
    return AdaptiveOutcome(waves, claimed)


def watched(strengths: dict[str, float], outcome: AdaptiveOutcome, anchor: str) -> bool:
    """Whether a plain 95% board (``leaderboard``'s own, one look) refit after every wave of
    ``outcome``, the last included, ever lists a pair the planted strengths deny: what a user
    would read if each wave showed a plain list."""
    finished: list[Comparison] = []
    for wave in outcome.waves:
        finished += wave
        # The board's fit and resolved pairs alone (``leaderboard`` builds the whole table).
        board = fit_board(finished, list(strengths), anchor=anchor)
        order, ranks = shared_ranks([BASE_RATING + ELO_SCALE * float(v) for v in board.log_strengths()])
        if false_pair(strengths, resolved_pairs(board, order, ranks)):
            return True
    return False


def one_run(
    strengths: dict[str, float], design: CompareDesign | Adaptive, budget: int, seed: int, watch: bool = False
) -> dict[str, float] | None:
    """Tau, top-1/top-3, coverage and width of one simulated run; None when the budget buys no
    prompt. ``watch`` (adaptive designs): also whether what the run shows, and what plain lists
    after every wave would show, is ever false (the stops table)."""
    systems = list(strengths)
    outcome = None
    if isinstance(design, Adaptive):
        outcome = adaptive_comparisons(strengths, design, budget, seed)
        comparisons, anchor = outcome.comparisons, systems[0]
        alpha = LOOK_ALPHA  # the final board's share of the design's 5%, as in a run
    else:
        made = fixed_comparisons(strengths, design, budget, seed)
        if made is None:
            return None
        comparisons, anchor = made
        alpha = RESOLVED_ALPHA
    board = leaderboard(comparisons, systems, anchor=anchor, resolved_alpha=alpha)
    rows = {row["system"]: row for row in board["rows"]}
    truth = {s: BASE_RATING + ELO_SCALE * (v - strengths[anchor]) for s, v in strengths.items()}
    others = [s for s in systems if s != anchor]
    tau = kendalltau([truth[s] for s in systems], [rows[s]["rating"] for s in systems]).statistic
    covered = [rows[s]["ci95"][0] <= truth[s] <= rows[s]["ci95"][1] for s in others]
    widths = [rows[s]["ci95"][1] - rows[s]["ci95"][0] for s in others]
    best = sorted(systems, key=lambda s: -strengths[s])
    fitted = [row["system"] for row in board["rows"]]
    pairs = win_rates(comparisons, systems)["pairs"]
    pair_covered = [
        pair["win_rate"]["ci95"][0]
        <= planted_win_rate(strengths, pair["system_a"], pair["system_b"])
        <= pair["win_rate"]["ci95"][1]
        for pair in pairs
    ]
    stopped: dict[str, float] = {}
    if isinstance(design, Adaptive) and outcome is not None:
        claimed = outcome.claimed
        stopped["resolved"] = float(claimed is not None)
        stopped["false_resolved"] = float(
            claimed is not None and false_claim(strengths, claimed, design.top_k)
        )
        if watch:
            stopped["false_shown"] = float(
                bool(stopped["false_resolved"]) or false_pair(strengths, board["resolved"])
            )
            stopped["false_watched"] = float(watched(strengths, outcome, anchor))
    return {
        **stopped,
        "tau": float(tau),
        "top1": float(strengths[fitted[0]] == strengths[best[0]]),  # a planted best (ties: any)
        "top3": float(set(fitted[:3]) == set(best[:3])),
        "coverage": sum(covered) / len(covered),
        "width": float(np.mean(widths)),
        "win_rate_coverage": float(np.mean(pair_covered)),
        "comparisons": len(comparisons),
        "prompts": board["prompts"],
    }


COLUMNS = ["systems", "design", "budget", "comparisons", "prompts", "Kendall tau", "top-1", "top-3"]
COLUMNS += ["rating CI coverage", "CI width (points)", "win-rate CI coverage", "resolved", "false resolved"]
STOP_COLUMNS = ["systems", "spread", "equal", "design", "budget", "runs", "comparisons", "resolved"]
STOP_COLUMNS += ["false resolved", "false shown", "false, plain 95% every wave", "top-1"]


def _share(row: dict[str, float | int | str], key: str) -> str:
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, nargs="*", default=[8, 16], help="none: the stops table only")
    parser.add_argument("--budgets", type=int, nargs="+", default=[240, 960])
    parser.add_argument("--adaptive-budgets", type=int, nargs="+", default=[120, 240, 480, 960])
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument(
        "--first-repetition",
        type=int,
        default=0,
        help="number the main table's runs from here: other seeds, for a check held out from earlier tables",
    )
    parser.add_argument(
        "--designs", nargs="+", metavar="LABEL", help="only these designs of the main table (e.g. all_pairs)"
    )
    parser.add_argument("--spread", type=float, default=SPREAD, help="the main table's log-strength spread")
    parser.add_argument("--stop-repetitions", type=int, default=1000, help="runs per row of the stops table")
    parser.add_argument(
        "--keep-stops",
        action="store_true",
        help="with -o and --stop-repetitions 0: keep the output file's stops table and its settings",
    )
    parser.add_argument(
        "--keep-rows",
        action="store_true",
        help="with -o: keep the output file's main-table rows and settings, replacing the rows rerun",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes running the tables' rows")
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    print("| " + " | ".join(COLUMNS) + " |")
    print("|" + " --- |" * len(COLUMNS))
    start = time.perf_counter()
    jobs = [
        RowJob(n, label, design, budget, args.repetitions, args.spread, args.first_repetition)
        for n in args.systems
        for label, design in designs(n)
        if args.designs is None or label in args.designs
        for budget in (args.adaptive_budgets if isinstance(design, Adaptive) else args.budgets)
    ]
    found, stops = [], []
    with multiprocessing.Pool(args.workers) as pool:
        # Both tables' rows are queued at once, so no worker waits for the other table; each
        # is printed as it arrives, in the tables' order.
        rows = pool.imap(design_row, jobs)
        stop_results = pool.imap(stop_row, stop_jobs(args.stop_repetitions))
        for row in rows:
            if row is not None:
                _print_row(row)
                found.append(row)
        print("\n| " + " | ".join(STOP_COLUMNS) + " |")
        print("|" + " --- |" * len(STOP_COLUMNS))
        for stop in stop_results:
            _print_stop(stop)
            stops.append(stop)
    seconds = time.perf_counter() - start
    print(
        f"\n{args.repetitions} repetitions per row, spread {args.spread}, nu {NU}; {seconds:.0f} s",
        file=sys.stderr,
    )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        document = output_document(args, found, stops, round(seconds, 1))
        args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0 if all(math.isfinite(float(r["tau"])) for r in found) else 1


Row = dict[str, float | int | str]
# What the main table's rows depend on besides their own key: a rerun row must match the kept.
MAIN_SETTINGS = ("spread", "repetitions", "first_repetition")


def output_document(
    args: argparse.Namespace, found: list[Row], stops: list[Row], seconds: float
) -> dict[str, object]:
    """The JSON written: this run's tables, or with ``--keep-rows`` / ``--keep-stops`` and an
    existing output file, its tables with the parts rerun replaced (the rerun listed under
    ``settings.reruns``)."""
    fresh: dict[str, object] = {
        "spread": args.spread,
        "nu": NU,
        "pool": POOL,
        "repetitions": args.repetitions,
        "first_repetition": args.first_repetition,
        "stop_repetitions": args.stop_repetitions,
        "seconds": seconds,
        "workers": args.workers,
    }
    if not (args.keep_rows or args.keep_stops) or not args.output.exists():
        return {"settings": fresh, "rows": found, "stops": stops}
    kept = json.loads(args.output.read_text())
    settings = dict(kept["settings"])
    if args.keep_rows:
        if found and any(settings[key] != fresh[key] for key in MAIN_SETTINGS):
            raise SystemExit(f"--keep-rows: rerun rows need the kept table's {MAIN_SETTINGS}, {settings}")
        found = merged_rows(kept["rows"], found)
    else:
        settings.update({key: fresh[key] for key in MAIN_SETTINGS})
    if args.keep_stops:
        stops = kept["stops"]
    else:
        settings["stop_repetitions"] = args.stop_repetitions
    rerun = {"args": sys.argv[1:], "seconds": seconds, "workers": args.workers}
    settings["reruns"] = [*settings.get("reruns", []), rerun]
    return {"settings": settings, "rows": found, "stops": stops}


def merged_rows(kept: list[Row], rerun: list[Row]) -> list[Row]:
    """``kept`` with each row of the same systems, design and budget as a rerun one replaced by
    it (in place), and the other rerun rows after them."""

    def key(row: Row) -> tuple[object, ...]:
        return row["systems"], row["design"], row["budget"]

    new = {key(row): row for row in rerun}
    out = [new.pop(key(row), row) for row in kept]
    return out + list(new.values())


def _print_stop(row: dict[str, float | int | str]) -> None:
    """Print a stops-table row as Markdown."""
    print(
        f"| {row['systems']} | {row['spread']} | {row['equal']} | {row['design']} | {row['budget']} | "
        f"{row['runs']} | {row['comparisons']:.0f} | {_share(row, 'resolved')} | "
        f"{_share(row, 'false_resolved')} | {_share(row, 'false_shown')} | {_share(row, 'false_watched')} | "
        f"{_share(row, 'top1')} |",
        flush=True,
    )


def _print_row(row: dict[str, float | int | str]) -> None:
    """Print a main-table row as Markdown."""
    print(
        f"| {row['systems']} | {row['design']} | {row['budget']} | {row['comparisons']:.0f} | "
        f"{row['prompts']:.0f} | {row['tau']:.3f} | {row['top1']:.0%} | {row['top3']:.0%} | "
        f"{row['coverage']:.1%} | {row['width']:.0f} | {row['win_rate_coverage']:.1%} | "
        f"{_share(row, 'resolved')} | {_share(row, 'false_resolved')} |",
        flush=True,
    )


if __name__ == "__main__":
    raise SystemExit(main())
