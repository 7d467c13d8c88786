"""How well each comparison design recovers a planted ranking, per comparison spent.

N systems get planted log-strengths evenly spaced over [-SPREAD/2, +SPREAD/2] (listed in a
shuffled order, so the design's system order says nothing about strength). For each design
(all_pairs; against a baseline, the median-strength system; opponents K) and each budget of
comparisons, the script builds the design's comparisons on as many prompts as the budget buys
(data/designs.py, the code a run uses), draws the panel's decisions from the Davidson model
(the leaderboard's own model, ties with nu = NU; ``davidson_simulation.simulate_davidson``),
fits the leaderboard with its bootstrap intervals over prompts, and records:

- Kendall's tau between the fitted and the planted ratings (1: the order recovered exactly);
- coverage: the share of (repetition, system) cases whose 95% interval holds the planted rating
  (both relative to the anchor, which is left out: its interval is [1000, 1000] by definition);
- the mean width of the intervals, in rating points.

    .venv/bin/python scripts/simulate_designs.py --repetitions 100 -o docs/performance/designs.json

prints a Markdown table (docs/performance.md) and writes the numbers as JSON.
"""

import argparse
import json
import math
import random
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import kendalltau

from chateval.config.data import CompareDesign
from chateval.data.designs import comparisons_per_prompt, design_pairs
from chateval.evaluation.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.davidson_simulation import simulate_davidson
from chateval.evaluation.leaderboard import leaderboard

SPREAD = 2.0  # log-strength between the best and the worst system: odds of e^2 = 7.4 to 1
NU = 0.5  # Davidson's tie parameter: about 20% ties between equals


def planted(n: int, rng: random.Random) -> dict[str, float]:
    """N systems named s01.. with evenly spaced log-strengths, in a shuffled listing order."""
    values = [SPREAD * (i / (n - 1) - 0.5) for i in range(n)]
    rng.shuffle(values)
    return {f"s{i + 1:02d}": v for i, v in enumerate(values)}


def designs(n: int) -> list[tuple[str, CompareDesign]]:
    """The designs compared at N systems."""
    out = [("all_pairs", CompareDesign())]
    out.append(("against median", CompareDesign(against="BASELINE")))
    for k in (2, 4):
        if k < n:
            out.append((f"opponents K={k}", CompareDesign(opponents=k)))
    return out


def one_run(
    strengths: dict[str, float], label: str, design: CompareDesign, budget: int, seed: int
) -> dict[str, float] | None:
    """Tau, coverage and width of one simulated run; None when the budget buys no prompt."""
    systems = list(strengths)
    if design.against is not None:  # the median-strength system is the baseline
        baseline = sorted(systems, key=strengths.__getitem__)[len(systems) // 2]
        design = CompareDesign(against=baseline)
    per_prompt = comparisons_per_prompt(design, len(systems))
    prompts = budget // per_prompt
    if prompts < 1:
        return None
    pairs = [(f"p{p}", a, b) for p in range(prompts) for a, b in design_pairs(design, systems, seed, f"p{p}")]
    comparisons = simulate_davidson(strengths, NU, pairs, np.random.default_rng(seed))
    anchor = design.against or systems[0]
    board = leaderboard(comparisons, systems, anchor=anchor, n_resamples=200, seed=seed)
    rows = {row["system"]: row for row in board["rows"]}
    truth = {s: BASE_RATING + ELO_SCALE * (v - strengths[anchor]) for s, v in strengths.items()}
    others = [s for s in systems if s != anchor]
    tau = kendalltau([truth[s] for s in systems], [rows[s]["rating"] for s in systems]).statistic
    covered = [rows[s]["ci95"][0] <= truth[s] <= rows[s]["ci95"][1] for s in others]
    widths = [rows[s]["ci95"][1] - rows[s]["ci95"][0] for s in others]
    return {
        "tau": float(tau),
        "coverage": sum(covered) / len(covered),
        "width": float(np.mean(widths)),
        "comparisons": len(comparisons),
        "prompts": prompts,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--systems", type=int, nargs="+", default=[8, 16])
    parser.add_argument("--budgets", type=int, nargs="+", default=[240, 960])
    parser.add_argument("--repetitions", type=int, default=100)
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    results = []
    columns = ["systems", "design", "comparisons / prompt", "budget", "prompts", "Kendall tau"]
    columns += ["coverage of 95% CI", "CI width (points)"]
    print("| " + " | ".join(columns) + " |")
    print("|" + " --- |" * len(columns))
    start = time.perf_counter()
    for n in args.systems:
        for label, design in designs(n):
            for budget in args.budgets:
                runs = []
                for rep in range(args.repetitions):
                    strengths = planted(n, random.Random(f"{n}:{rep}"))
                    run = one_run(strengths, label, design, budget, seed=rep)
                    if run is not None:
                        runs.append(run)
                if not runs:
                    continue
                row = {
                    "systems": n,
                    "design": label,
                    "per_prompt": comparisons_per_prompt(
                        design if design.against is None else CompareDesign(against="x"), n
                    ),
                    "budget": budget,
                    "prompts": runs[0]["prompts"],
                    "comparisons": runs[0]["comparisons"],
                    "repetitions": len(runs),
                    "tau": float(np.mean([r["tau"] for r in runs])),
                    "coverage": float(np.mean([r["coverage"] for r in runs])),
                    "width": float(np.mean([r["width"] for r in runs])),
                }
                results.append(row)
                print(
                    f"| {n} | {label} | {row['per_prompt']} | {budget} | {row['prompts']} | "
                    f"{row['tau']:.3f} | {row['coverage']:.1%} | {row['width']:.0f} |",
                    flush=True,
                )
    seconds = time.perf_counter() - start
    print(
        f"\n{args.repetitions} repetitions per row, spread {SPREAD}, nu {NU}; {seconds:.0f} s",
        file=sys.stderr,
    )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        meta = {"spread": SPREAD, "nu": NU, "repetitions": args.repetitions, "seconds": round(seconds, 1)}
        args.output.write_text(json.dumps({"settings": meta, "rows": results}, indent=2) + "\n")
    return 0 if all(math.isfinite(r["tau"]) for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
