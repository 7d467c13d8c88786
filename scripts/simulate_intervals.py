"""Do the 95% intervals of accuracy and kappa, the rank correlations, the panel's ratings and
win rates, the length share, the calibrated estimates, the direct scores' means and the
compared judges' tau bounds hold their 95%, few prompts and few labels included? (Designs of
many systems, adaptive ones included, are in simulate_designs.py.)

Each family of rows (``--only``) is a module of scripts/simulations/intervals/ whose doc says
what it plants and what the truth is; most plant four systems with log-strengths 0.6, 0.2,
-0.2, -0.6 that meet in all pairs on every prompt, decisions drawn from the Davidson model (ties
with nu = NU, the leaderboard's own model). Each row reports, over the repetitions, the share of
intervals that hold the true value and their mean width.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/simulate_intervals.py --repetitions 2000 \\
        -o docs/performance/intervals.json
"""

import argparse
import json
import sys
import time
from pathlib import Path

from simulations.davidson import NU
from simulations.intervals import (
    agreement,
    baseline,
    boards,
    calibrated,
    correlations,
    direct,
    field_win_rates,
    length,
    paired_agreement,
    paired_correlations,
    panel,
)
from simulations.intervals.rows import TABLE_HEADER, Rows, table_line
from simulations.intervals.systems import STRENGTHS

import chateval.evaluation.systems.against_baseline as against_baseline_module

# family -> (its rows, the statistics it writes); every row of a family is seeded on its own,
# so one family rerun (``--only``) gives the rows a whole run would.
FAMILIES = {
    "agreement": (agreement.agreement_rows, ("accuracy", "kappa")),
    "paired": (paired_agreement.paired_rows, ("paired accuracy difference", "paired kappa difference")),
    "paired-correlations": (
        paired_correlations.paired_correlation_rows,
        ("paired Spearman difference", "paired Kendall difference"),
    ),
    "correlations": (correlations.correlation_rows, ("Spearman", "Kendall")),
    "length": (length.length_rows, ("length share",)),
    "calibrated-pair": (calibrated.calibrated_pair_rows, ("calibrated pair",)),
    "calibrated-field": (calibrated.field_rows, ("calibrated field win rate",)),
    "calibrated-rating": (calibrated.rating_rows, ("calibrated rating",)),
    "baseline": (baseline.baseline_rows, ("length-controlled win rate",)),
    "panel": (panel.panel_rows, ("rating", "win rate")),
    "field-win-rates": (
        field_win_rates.field_win_rate_rows,
        ("field win rate (8 systems)", "pair win rate (8 systems)"),
    ),
    "boards": (boards.board_rows, ("tau bounds (compare)",)),
    "direct": (direct.direct_rows, ("direct mean", "direct paired difference")),
}


def _replace_rows(kept: Rows, fresh: Rows, replaced: set[str]) -> Rows:
    """``kept`` with its rows of the ``replaced`` statistics swapped for ``fresh``, placed where
    the first replaced row stood (at the end when none did): a family that gains or loses rows
    keeps its place and no stale row survives."""
    positions = [k for k, row in enumerate(kept) if row["statistic"] in replaced]
    at = positions[0] if positions else len(kept)
    others = [row for row in kept if row["statistic"] not in replaced]
    before = sum(1 for row in kept[:at] if row["statistic"] not in replaced)
    return others[:before] + fresh + others[before:]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=400)
    parser.add_argument(
        "--only",
        nargs="+",
        choices=list(FAMILIES),
        help="rerun these families only; with -o, their rows replace those in the file (the others kept)",
    )
    parser.add_argument("-o", "--output", type=Path)
    parser.add_argument(
        "--lc-min-prompts",
        type=int,
        help="the baseline family with another prompt count below which the length-controlled rate "
        "is withheld (0: the interval's width alone decides): shows why it is 8; not with -o",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="print the markdown table of the rows in -o (docs/performance.md's) and exit",
    )
    args = parser.parse_args()
    if args.lc_min_prompts is not None:
        if args.output is not None:
            parser.error("--lc-min-prompts shows a setting not kept: it does not write -o")
        against_baseline_module.LC_MIN_PROMPTS = args.lc_min_prompts
    reps = args.repetitions
    chosen = args.only or list(FAMILIES)
    rows: Rows = []
    if args.table:
        if args.output is None:
            parser.error("--table prints the rows of the file given with -o")
        print(TABLE_HEADER)
        print("\n".join(table_line(row) for row in json.loads(args.output.read_text())["rows"]))
        return 0
    print(TABLE_HEADER)
    start = time.perf_counter()
    for family in chosen:
        FAMILIES[family][0](reps, rows)
    seconds = time.perf_counter() - start
    print(
        f"\n{reps} repetitions per row (the field win rates: runs of 4 systems until {reps} cases); "
        f"{seconds:.0f} s",
        file=sys.stderr,
    )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        meta: dict[str, object] = {"nu": NU, "strengths": STRENGTHS, "repetitions": reps}
        if args.only and args.output.exists():  # keep the other families' rows, in their order
            kept = json.loads(args.output.read_text())
            replaced = {name for family in chosen for name in FAMILIES[family][1]}
            rows = _replace_rows(kept["rows"], rows, replaced)
            reruns = {**kept["settings"].get("rerun", {}), ", ".join(chosen): round(seconds, 1)}
            meta = {**kept["settings"], "rerun": reruns}
        else:
            meta["seconds"] = round(seconds, 1)
        args.output.write_text(json.dumps({"settings": meta, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
