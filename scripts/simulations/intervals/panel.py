"""**rating** and **win rate** (``leaderboard`` and ``win_rates``, the panel alone): the four
systems (``systems``) in all pairs on 2 to 40 prompts, answer order drawn at random; with
``prompt effect`` each system's log-strength on a prompt is its own plus N(0, 0.7^2). The truth
of a rating is the fit on 20,000 prompts of the same design; of a win rate, the planted one
averaged over the prompt effect.
"""

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.leaderboard import leaderboard
from chateval.evaluation.systems.win_rates import win_rates
from simulations.davidson import all_pairs_comparisons, averaged_win_rates
from simulations.intervals.rows import Rows, summarise
from simulations.intervals.systems import STRENGTHS

PROMPT_SPREAD = 0.7  # sd of a system's own log-strength on one prompt, with ``prompt effect``
TRUTH_PROMPTS = 20_000  # prompts of the large run whose fit is the panel-only ratings' truth


def panel_comparisons(prompts: int, effect: bool, rng: np.random.Generator) -> list[Comparison]:
    """All pairs of STRENGTHS on each of ``prompts`` prompts, answer order drawn at random; with
    ``effect`` each system's log-strength on a prompt is its own plus N(0, PROMPT_SPREAD^2)."""
    return all_pairs_comparisons(STRENGTHS, prompts, PROMPT_SPREAD if effect else 0.0, 1, rng)


def panel_truth(effect: bool) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """What the panel-only leaderboard and win rates estimate: each system's rating as fitted on
    TRUTH_PROMPTS prompts (the anchor a at 1000), and each pair's win rate (ties half) averaged
    over 10^6 draws of the prompt effect."""
    rng = np.random.default_rng([17, int(effect)])
    board = leaderboard(panel_comparisons(TRUTH_PROMPTS, effect, rng), list(STRENGTHS), anchor="a")
    ratings = {row["system"]: row["rating"] for row in board["rows"]}
    draws = rng.normal(0.0, PROMPT_SPREAD if effect else 0.0, (1_000_000, 2))
    return ratings, averaged_win_rates(STRENGTHS, draws)


def panel_run(
    prompts: int,
    effect: bool,
    truth: tuple[dict[str, float], dict[tuple[str, str], float]],
    rng: np.random.Generator,
) -> tuple[list[tuple[bool, float]], list[tuple[bool, float]]]:
    """The non-anchor ratings' and the pairs' win-rate (coverage, width) cases of one run."""
    ratings, rates = truth
    comparisons = panel_comparisons(prompts, effect, rng)
    board = leaderboard(comparisons, list(STRENGTHS), anchor="a")
    rating_cases = [
        (row["ci95"][0] <= ratings[row["system"]] <= row["ci95"][1], row["ci95"][1] - row["ci95"][0])
        for row in board["rows"]
        if row["system"] != "a"
    ]
    rate_cases = []
    for pair in win_rates(comparisons, list(STRENGTHS))["pairs"]:
        a, b = pair["system_a"], pair["system_b"]
        planted = rates[(a, b)] if (a, b) in rates else 1 - rates[(b, a)]
        low, high = pair["win_rate"]["ci95"]
        rate_cases.append((low <= planted <= high, high - low))
    return rating_cases, rate_cases


def panel_rows(reps: int, rows: Rows) -> None:
    for effect in (False, True):
        truth = panel_truth(effect)
        for prompts in (2, 3, 4, 5, 8, 20, 40):
            rng = np.random.default_rng([prompts, int(effect), 5])
            runs = [panel_run(prompts, effect, truth, rng) for _ in range(reps)]
            setting = f"4 systems x {prompts} prompts" + (", prompt effect" if effect else "")
            summarise("rating", setting, [c for run in runs for c in run[0]], rows)
            summarise("win rate", setting, [c for run in runs for c in run[1]], rows)
