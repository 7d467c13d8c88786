"""**length-controlled win rate** (``against_baseline.lc_win_rate``, as ``compare: {against:
X}``): one comparison of a system with the baseline on each of 3 to 40 prompts; the system's
answer is N(0, 60^2) words longer than the baseline's, its logit of winning theta + phi
tanh(difference / 60) plus N(0, 0.5^2), 30% of the comparisons ties (theta and phi both 0, or
both 1). The truth is the rate's value on 400,000 comparisons; a run whose rate is not
estimable is withheld, as ``against_baseline`` withholds it, and counted in the setting.
"""

import numpy as np

import chateval.evaluation.systems.against_baseline as against_baseline_module
from chateval.evaluation.systems.against_baseline import lc_not_estimable, lc_win_rate
from simulations.intervals.rows import Rows, summarise

BASELINE_LENGTH_SD = 60.0  # words: the spread of a system's answer length minus the baseline's
BASELINE_TIES = 0.3


def baseline_comparisons(
    prompts: int, theta: float, phi: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One comparison of a system with the baseline per prompt (``compare: {against: X}``):
    outcomes (ties half), length differences and prompt ids."""
    differences = np.round(rng.normal(0.0, BASELINE_LENGTH_SD, prompts))
    strength = theta + phi * np.tanh(differences / BASELINE_LENGTH_SD) + rng.normal(0.0, 0.5, prompts)
    win = 1 / (1 + np.exp(-strength))
    draw = rng.random(prompts)
    outcomes = np.where(draw < BASELINE_TIES, 0.5, np.where(rng.random(prompts) < win, 1.0, 0.0))
    return outcomes, differences, np.arange(prompts).astype(str)


def planted_lc_win_rate(theta: float, phi: float) -> float:
    """What the length-controlled win rate estimates: its value on 400,000 comparisons."""
    outcomes, differences, prompts = baseline_comparisons(400_000, theta, phi, np.random.default_rng(7))
    rate, _, _ = lc_win_rate(outcomes, differences, prompts, float(np.std(differences)))
    return rate["value"]


def baseline_run(
    prompts: int, theta: float, phi: float, truth: float, rng: np.random.Generator
) -> tuple[bool, float] | None:
    """Whether the length-controlled win rate's interval holds the truth, and its width; None
    where the rate is not estimable (withheld, as ``against_baseline`` withholds it)."""
    outcomes, differences, ids = baseline_comparisons(prompts, theta, phi, rng)
    rate, _, _ = lc_win_rate(outcomes, differences, ids, float(np.std(differences)))
    if lc_not_estimable(rate, differences, prompts):
        return None
    low, high = rate["ci95"]
    return low <= truth <= high, high - low


def baseline_rows(reps: int, rows: Rows) -> None:
    """Coverage of the length-controlled rates shown; runs go on (up to 20 times ``reps``) until
    ``reps`` are shown, and the setting says how many were withheld as not estimable (under
    ``LC_MIN_PROMPTS`` prompts every one: no row, a line printed)."""
    for theta, phi in ((0.0, 0.0), (1.0, 1.0)):
        truth = planted_lc_win_rate(theta, phi)
        for prompts in (3, 4, 5, 8, 10, 20, 40):
            rng = np.random.default_rng([prompts, int(10 * theta), int(10 * phi)])
            cases: list[tuple[bool, float]] = []
            runs = 0
            enough = prompts >= against_baseline_module.LC_MIN_PROMPTS
            while len(cases) < reps and runs < (20 * reps if enough else reps):
                runs += 1
                if (case := baseline_run(prompts, theta, phi, truth, rng)) is not None:
                    cases.append(case)
            setting = f"{prompts} prompts against the baseline, logit {theta:g} + {phi:g} x length"
            setting += f" ({runs - len(cases)} of {runs} runs not estimable)"
            if cases:
                summarise("length-controlled win rate", setting, cases, rows)
            else:
                print(f"| length-controlled win rate | {setting} | 0 | - | - |", flush=True)
