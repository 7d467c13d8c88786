"""The exact coverage of the paired accuracy difference's interval
(``chateval.evaluation.agreement.paired_interval``), with its critical value and with the normal
1.96, over a grid of discordance rates.

Two runs judge the same n items; an item is right in B only with probability p_b, in A only with
p_a, otherwise concordant. The counts (b, c) of the two kinds are trinomial, and the interval
depends on (b, c, n) only, so the coverage at (p_a, p_b) is the sum of the trinomial
probabilities of the outcomes whose interval holds p_b - p_a: exact, no simulation noise. Each
row is one n and one reading; ``worst`` is its lowest coverage over the grid and where.

    .venv/bin/python scripts/paired_difference_coverage.py -o docs/performance/paired_difference.json
"""

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln
from scipy.stats import norm

from chateval.evaluation.agreement.paired_interval import (
    accuracy_difference_interval,
    score_statistic,
)

GRID = (0.003, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2, 0.3, 0.45)
NORMAL = float(norm.ppf(0.975))


def normal_interval(b_only: int, a_only: int, n: int) -> tuple[float, float]:
    """Tango's score interval read with the normal quantile (the reading replaced)."""
    estimate = (b_only - a_only) / n

    def statistic(d0: float) -> float:
        return score_statistic(b_only, a_only, n, d0)

    edge = 1e-12
    low = (
        -1.0
        if statistic(-1 + edge) <= NORMAL
        else brentq(lambda d: statistic(d) - NORMAL, -1 + edge, estimate)
    )
    high = (
        1.0 if statistic(1 - edge) >= -NORMAL else brentq(lambda d: statistic(d) + NORMAL, estimate, 1 - edge)
    )
    return min(low, estimate), max(high, estimate)


def coverage_table(n: int, interval: object) -> list[dict[str, float]]:
    """Exact coverage and mean width at every (p_a, p_b) of the grid."""
    outcomes = [(b, c) for b in range(n + 1) for c in range(n + 1 - b)]
    bounds = np.array([interval(b, c, n) for b, c in outcomes])  # type: ignore[operator]
    b = np.array([o[0] for o in outcomes], dtype=float)
    c = np.array([o[1] for o in outcomes], dtype=float)
    rest = n - b - c
    log_count = gammaln(n + 1) - gammaln(b + 1) - gammaln(c + 1) - gammaln(rest + 1)
    cells = []
    for p_a in GRID:
        for p_b in GRID:
            if p_a + p_b >= 1:
                continue
            log_p = log_count + b * math.log(p_b) + c * math.log(p_a) + rest * math.log(1 - p_a - p_b)
            probability = np.exp(log_p)
            truth = p_b - p_a
            held = (bounds[:, 0] <= truth + 1e-12) & (truth - 1e-12 <= bounds[:, 1])
            cells.append(
                {
                    "p_a": p_a,
                    "p_b": p_b,
                    "coverage": float(probability[held].sum()),
                    "width": float((probability * (bounds[:, 1] - bounds[:, 0])).sum()),
                }
            )
    return cells


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, nargs="+", default=[5, 12, 24, 40, 80, 200])
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = []
    print("| items | reading | lowest coverage | where (p_a, p_b) | mean width |")
    print("| --- | --- | --- | --- | --- |")
    for n in args.items:
        for reading, interval in (
            ("t on min(n-1, 2d+6) df", accuracy_difference_interval),
            ("normal", normal_interval),
        ):
            cells = coverage_table(n, interval)
            worst = min(cells, key=lambda cell: cell["coverage"])
            width = float(np.mean([cell["width"] for cell in cells]))
            rows.append(
                {"items": n, "reading": reading, "worst": worst, "mean_width": width, "cells": len(cells)}
            )
            where = f"({worst['p_a']}, {worst['p_b']})"
            print(f"| {n} | {reading} | {worst['coverage']:.2%} | {where} | {width:.3f} |", flush=True)
    seconds = time.perf_counter() - start
    print(f"\n{seconds:.0f} s", file=sys.stderr)
    if args.output is not None:
        document = {"grid": list(GRID), "seconds": round(seconds, 1), "rows": rows}
        args.output.write_text(json.dumps(document, indent=2) + "\n")
    return 0 if all(r["worst"]["coverage"] >= 0.94 for r in rows if r["reading"] != "normal") else 1


if __name__ == "__main__":
    raise SystemExit(main())
