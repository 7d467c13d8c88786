"""Win rates of systems judged by the panel: per pair of systems and per system against all its
opponents, wins, ties, losses and the win rate (a tie counts as half a win), hard and soft, each
with a 95% Wilson interval whose design effect and t quantile come from the prompts the
comparisons share; below 5 prompts, the exact interval with each prompt as one unit (a
system's comparisons on one prompt share its answer) (``proportion_interval``).

Every win rate is a ratio of sums over comparisons, so its interval needs only its per-prompt
sums and counts: one (prompts x pairs) matrix of each gives every pair's interval at once.
"""

from collections.abc import Sequence

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison, comparison_arrays, each_side, tallies
from chateval.evaluation.systems.length_bias import length_bias_of
from chateval.evaluation.systems.proportion_interval import mean_intervals, per_prompt, proportion_intervals
from chateval.schema.systems import PairWinRate, ProportionInterval, SystemWinRate, WinRates


def _records(
    prompt: np.ndarray,
    n_prompts: int,
    column: np.ndarray,
    score: np.ndarray,
    soft: np.ndarray,
    n_columns: int,
) -> tuple[
    np.ndarray, np.ndarray, np.ndarray, list[ProportionInterval], list[ProportionInterval | None], np.ndarray
]:
    """Counts, ties, wins, hard and soft win-rate intervals of comparisons grouped by
    ``column`` (each comparison's prompt in ``prompt``); ``score`` and ``soft`` are each
    comparison's outcome and soft probability from its column's point of view."""
    shape = (n_prompts, n_columns)
    ones = np.ones_like(score)
    n = per_prompt(prompt, column, ones, shape)
    hard = proportion_intervals(per_prompt(prompt, column, score, shape), n)
    has_soft = ~np.isnan(soft)
    n_soft = per_prompt(prompt[has_soft], column[has_soft], ones[has_soft], shape)
    soft_sums = per_prompt(prompt[has_soft], column[has_soft], soft[has_soft], shape)
    soft_squares = per_prompt(prompt[has_soft], column[has_soft], soft[has_soft] ** 2, shape)
    observed = n_soft.sum(axis=0) > 0
    found = iter(mean_intervals(soft_sums[:, observed], soft_squares[:, observed], n_soft[:, observed]))
    soft_out = [next(found) if seen else None for seen in observed]
    total, wins, ties = tallies(column, score, n_columns)
    return total, ties, wins, hard, soft_out, n_soft.sum(axis=0)


def win_rates(comparisons: Sequence[Comparison], systems: Sequence[str] | None = None) -> WinRates:
    """Per pair of systems and per system: wins, ties, losses and win rate (ties half), hard
    and soft, with 95% intervals clustered by prompt (``proportion_interval``); and the length
    bias.

    A pair is reported once, oriented as ``systems`` orders it (first appearance by default):
    ``system_a`` comes first and the counts and rates are its. Pairs never compared are left out.
    """
    arrays = comparison_arrays(comparisons, systems)
    n_systems = len(arrays.systems)

    # Orient every comparison to the pair's first system, so (i, j) and (j, i) pool together.
    first = np.minimum(arrays.a, arrays.b)
    second = np.maximum(arrays.a, arrays.b)
    flipped = arrays.a != first
    score = np.where(flipped, 1.0 - arrays.outcome, arrays.outcome)
    soft = np.where(flipped, 1.0 - arrays.soft, arrays.soft)
    pair_index = first * n_systems + second
    present = np.unique(pair_index)
    column = np.searchsorted(present, pair_index)
    n_prompts = len(arrays.prompts)
    n, ties, wins, hard, soft_rates, n_soft = _records(
        arrays.prompt, n_prompts, column, score, soft, len(present)
    )
    pairs: list[PairWinRate] = []
    for k, index in enumerate(present):
        i, j = divmod(int(index), n_systems)
        pairs.append(
            {
                "system_a": arrays.systems[i],
                "system_b": arrays.systems[j],
                "n": int(n[k]),
                "prompts": len(np.unique(arrays.prompt[column == k])),
                "wins": int(wins[k]),
                "ties": int(ties[k]),
                "losses": int(n[k] - wins[k] - ties[k]),
                "win_rate": hard[k],
                "soft_win_rate": soft_rates[k],
                "n_soft": int(n_soft[k]),
            }
        )

    # Every comparison counts once for each of its systems, from that system's side.
    sides = each_side(arrays)
    n, ties, wins, hard, soft_rates, n_soft = _records(
        sides.prompt, n_prompts, sides.system, sides.score, sides.soft, n_systems
    )
    overall: list[SystemWinRate] = [
        {
            "system": name,
            "n": int(n[i]),
            "wins": int(wins[i]),
            "ties": int(ties[i]),
            "losses": int(n[i] - wins[i] - ties[i]),
            "win_rate": hard[i],
            "soft_win_rate": soft_rates[i],
            "n_soft": int(n_soft[i]),
        }
        for i, name in enumerate(arrays.systems)
    ]
    return {
        "systems": list(arrays.systems),
        "prompts": len(arrays.prompts),
        "comparisons": len(comparisons),
        "pairs": pairs,
        "overall": overall,
        "length_bias": length_bias_of(arrays),
    }
