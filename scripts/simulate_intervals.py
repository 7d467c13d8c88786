"""Do the 95% intervals of the length share and of the calibrated estimates hold their 95%,
few prompts and few labels included? (The ratings' and win rates' are in simulate_designs.py.)

Four systems with planted log-strengths 0.6, 0.2, -0.2, -0.6 meet in all pairs on every prompt;
decisions are drawn from the Davidson model (ties with nu = NU, the leaderboard's own model),
and each row reports, over the repetitions, the share of intervals that hold the true value and
their mean width:

- **length share** (``win_rates``' length bias): every answer gets a random length; the panel's
  decisions do not depend on it on average, so the longer answer's true share of decisive
  comparisons is 0.5. With ``prompt effect`` each prompt has its own length preference
  gamma_p ~ N(0, 1) (some prompts favour the longer answer, some the shorter, 0 on average): the
  comparisons of a prompt then move together, which is what the prompt-clustered design effect
  is for.
- **calibrated pair** (``ppi_mean`` with bounds [0, 1], as a run's per-pair calibrated win
  rates): 40 comparisons of one pair, of which n carry a human label; the human outcome is drawn
  from the model (the truth is the pair's planted win rate, P(win) + P(tie) / 2), the panel's
  verdict equals it with probability ``agreement`` and is otherwise an independent draw from a
  panel that sees the systems as equal.
- **calibrated field win rates** (``calibrated_leaderboard``): all pairs on 40 prompts (240
  comparisons), a seeded random share of them labelled; the truth is each system's mean planted
  win rate against the other three.

    OPENBLAS_NUM_THREADS=1 .venv/bin/python scripts/simulate_intervals.py --repetitions 400 \\
        -o docs/performance/intervals.json
"""

import argparse
import itertools
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

from chateval.evaluation.systems.calibrated_leaderboard import calibrated_leaderboard
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.evaluation.systems.win_rates import win_rates

NU = 0.5
STRENGTHS = {"a": 0.6, "b": 0.2, "c": -0.2, "d": -0.6}
EQUAL = dict.fromkeys(STRENGTHS, 0.0)
PAIRS = list(itertools.combinations(STRENGTHS, 2))


def planted_win_rate(a: str, b: str) -> float:
    """P(a wins) + P(tie) / 2 under the Davidson model."""
    pa, pb = math.exp(STRENGTHS[a]), math.exp(STRENGTHS[b])
    tie = NU * math.sqrt(pa * pb)
    return (pa + tie / 2) / (pa + pb + tie)


def length_share_run(
    prompts: int, prompt_effect: bool, rng: np.random.Generator
) -> tuple[bool, float] | None:
    """Whether the longer answer's share interval holds 0.5, and its width; None: no decisive
    comparison between answers of different lengths."""
    comparisons: list[Comparison] = []
    for p in range(prompts):
        lengths = {s: int(rng.integers(20, 400)) for s in STRENGTHS}
        gamma = float(rng.normal(0.0, 1.0)) if prompt_effect else 0.0
        pairs = [(f"p{p}", a, b) for a, b in PAIRS]
        comparisons += simulate_davidson(
            STRENGTHS, NU, pairs, rng, gamma=gamma, lengths={(f"p{p}", s): n for s, n in lengths.items()}
        )
    share = win_rates(comparisons)["length_bias"]["share"]
    if share is None:
        return None
    low, high = share["ci95"]
    return low <= 0.5 <= high, high - low


def panel_copy(human: list[Comparison], agreement: float, rng: np.random.Generator) -> list[float]:
    """The panel's outcome for each comparison: the human one with probability ``agreement``,
    else an independent draw from a panel that sees the systems as equal."""
    guesses = simulate_davidson(EQUAL, NU, [(c.prompt, c.system_a, c.system_b) for c in human], rng)
    keep = rng.random(len(human)) < agreement
    return [h.outcome if k else g.outcome for h, g, k in zip(human, guesses, keep, strict=True)]


def calibrated_pair_run(labels: int, agreement: float, rng: np.random.Generator) -> tuple[bool, float]:
    """Whether one pair's calibrated win rate interval holds the planted win rate, and its width."""
    human = simulate_davidson(STRENGTHS, NU, [(f"p{p}", "a", "b") for p in range(40)], rng)
    panel = panel_copy(human, agreement, rng)
    labelled = rng.permutation(40) < labels
    estimate = ppi_mean(
        [h.outcome for h, lab in zip(human, labelled, strict=True) if lab],
        [v for v, lab in zip(panel, labelled, strict=True) if lab],
        [v for v, lab in zip(panel, labelled, strict=True) if not lab],
        bounds=(0.0, 1.0),
    )
    low, high = estimate["ci"]
    return low <= planted_win_rate("a", "b") <= high, high - low


def field_run(fraction: float, agreement: float, rng: np.random.Generator) -> list[tuple[bool, float]]:
    """Each system's calibrated field win rate: whether its interval holds the truth, its width."""
    pairs = [(f"p{p}", a, b) for p in range(40) for a, b in PAIRS]
    human = simulate_davidson(STRENGTHS, NU, pairs, rng)
    panel = panel_copy(human, agreement, rng)
    comparisons = [
        Comparison(h.prompt, h.system_a, h.system_b, v, None, 0, 0) for h, v in zip(human, panel, strict=True)
    ]
    labelled = rng.random(len(human)) < fraction
    outcomes = [h.outcome if lab else None for h, lab in zip(human, labelled, strict=True)]
    try:
        board = calibrated_leaderboard(comparisons, outcomes, anchor="a", soft=False)
    except ValueError:  # too few labels for some system: the board is refused
        return []
    out = []
    for row in board["rows"]:
        field = row["field"]
        if field is None:
            continue
        truth = float(np.mean([planted_win_rate(row["system"], o) for o in STRENGTHS if o != row["system"]]))
        low, high = field["ci"]
        out.append((low <= truth <= high, high - low))
    return out


def summarise(
    label: str, setting: str, cases: list[tuple[bool, float]], rows: list[dict[str, object]]
) -> None:
    coverage = float(np.mean([c for c, _ in cases]))
    width = float(np.mean([w for _, w in cases]))
    rows.append(
        {"statistic": label, "setting": setting, "cases": len(cases), "coverage": coverage, "width": width}
    )
    print(f"| {label} | {setting} | {len(cases)} | {coverage:.1%} | {width:.3f} |", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repetitions", type=int, default=400)
    parser.add_argument("-o", "--output", type=Path)
    args = parser.parse_args()
    reps = args.repetitions
    rows: list[dict[str, object]] = []
    print("| statistic | setting | cases | coverage of 95% CI | mean width |")
    print("| --- | --- | --- | --- | --- |")
    start = time.perf_counter()
    for effect in (False, True):
        for prompts in (2, 4, 8, 30):
            rng = np.random.default_rng([prompts, int(effect)])
            cases = [
                c for c in (length_share_run(prompts, effect, rng) for _ in range(reps)) if c is not None
            ]
            setting = f"{prompts} prompts x 6 comparisons" + (", prompt effect" if effect else "")
            summarise("length share", setting, cases, rows)
    for agreement in (0.8, 0.0):
        for labels in (3, 5, 10, 30):
            rng = np.random.default_rng([labels, int(10 * agreement)])
            cases = [calibrated_pair_run(labels, agreement, rng) for _ in range(reps)]
            summarise(
                "calibrated pair", f"{labels} of 40 labelled, panel agrees {agreement:.0%}", cases, rows
            )
    for agreement in (0.8, 0.0):
        for fraction in (0.1, 0.25):
            rng = np.random.default_rng([int(100 * fraction), int(10 * agreement)])
            cases = [case for _ in range(reps // 4) for case in field_run(fraction, agreement, rng)]
            setting = f"{fraction:.0%} of 240 labelled, panel agrees {agreement:.0%}"
            summarise("calibrated field win rate", setting, cases, rows)
    seconds = time.perf_counter() - start
    print(
        f"\n{reps} repetitions per row ({reps // 4} for the field win rates, 4 systems each); "
        f"{seconds:.0f} s",
        file=sys.stderr,
    )
    if args.output is not None:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        meta = {"nu": NU, "strengths": STRENGTHS, "repetitions": reps, "seconds": round(seconds, 1)}
        args.output.write_text(json.dumps({"settings": meta, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
