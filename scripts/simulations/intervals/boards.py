"""**tau bounds (compare)** (``judges.compare_boards``): two judges rank 4 or 8 systems on the
same 5 to 80 prompts, judge B's strengths A's (or A's plus N(0, 0.5^2) each; or A's with the
middle two equal); the truth is tau-a between the two planted orders.
"""

import itertools

import numpy as np

from chateval.evaluation.agreement.judges import compare_boards
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.leaderboard import leaderboard
from simulations.davidson import NU
from simulations.intervals.rows import Rows, summarise


def judge_strengths(
    systems: int, noise: float, equal: bool, rng: np.random.Generator
) -> tuple[dict[str, float], dict[str, float]]:
    """Two judges' log-strengths of ``systems`` systems: A's evenly spaced over [-1, 1] (with
    ``equal``, the middle two made equal), B's A's plus N(0, noise^2) each."""
    values = [2 * (i / (systems - 1) - 0.5) for i in range(systems)]
    if equal:
        middle = systems // 2 - 1
        values[middle] = values[middle + 1] = (values[middle] + values[middle + 1]) / 2
    a = {f"s{i}": v for i, v in enumerate(values)}
    return a, {s: v + float(rng.normal(0.0, noise)) if noise else v for s, v in a.items()}


def boards_run(
    systems: int, prompts: int, noise: float, equal: bool, rng: np.random.Generator
) -> tuple[bool, float]:
    """Whether ``compare_boards``' tau bounds hold the two judges' planted tau (tau-a over the
    pairs: +1 ordered alike, -1 not, 0 a tie in either), and their width."""
    strengths_a, strengths_b = judge_strengths(systems, noise, equal, rng)
    names = list(strengths_a)
    pairs = [
        (f"p{p}", a, b) if rng.random() < 0.5 else (f"p{p}", b, a)
        for p in range(prompts)
        for a, b in itertools.combinations(names, 2)
    ]
    boards = [
        leaderboard(simulate_davidson(strengths, NU, pairs, rng), names, anchor=names[0])
        for strengths in (strengths_a, strengths_b)
    ]
    found = compare_boards(boards[0], boards[1])
    assert found is not None and "tau_bounds" in found
    low, high = found["tau_bounds"]
    truth = float(
        np.mean(
            [
                np.sign(strengths_a[x] - strengths_a[y]) * np.sign(strengths_b[x] - strengths_b[y])
                for x, y in itertools.combinations(names, 2)
            ]
        )
    )
    return low - 1e-12 <= truth <= high + 1e-12, high - low


def board_rows(reps: int, rows: Rows) -> None:
    settings = [(4, 5), (4, 20), (4, 80), (8, 5), (8, 20), (8, 80)]
    for noise, equal in ((0.0, False), (0.5, False), (0.0, True)):
        for systems, prompts in settings:
            rng = np.random.default_rng([systems, prompts, int(10 * noise), int(equal)])
            cases = [boards_run(systems, prompts, noise, equal, rng) for _ in range(reps)]
            judges = "the same strengths" if noise == 0 else f"B = A + N(0, {noise:g}^2)"
            setting = f"{systems} systems x {prompts} prompts, {judges}" + (
                ", middle two equal" if equal else ""
            )
            summarise("tau bounds (compare)", setting, cases, rows)
