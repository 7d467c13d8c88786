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
arguments and seconds under ``settings.reruns``. The pieces are modules of
scripts/simulations/designs/ (the planted systems, the adaptive design on a simulated panel,
the claims checked, one run of a design, the two tables' rows).
"""

import argparse
import json
import math
import multiprocessing
import sys
import time
from pathlib import Path

from simulations.davidson import NU
from simulations.designs.adaptive import POOL, Adaptive
from simulations.designs.planted import SPREAD
from simulations.designs.runs import designs
from simulations.designs.tables import (
    COLUMNS,
    STOP_COLUMNS,
    RowJob,
    design_row,
    print_row,
    print_stop,
    stop_jobs,
    stop_row,
)


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
                print_row(row)
                found.append(row)
        print("\n| " + " | ".join(STOP_COLUMNS) + " |")
        print("|" + " --- |" * len(STOP_COLUMNS))
        for stop in stop_results:
            print_stop(stop)
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


if __name__ == "__main__":
    raise SystemExit(main())
