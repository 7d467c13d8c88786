"""**field win rate (8 systems)** and **pair win rate (8 systems)** (``win_rates``' per-system
and per-pair rates, family ``field-win-rates``): 8 systems with log-strengths 1.4 to -1.4, 0.4
apart, in all pairs on 2 to 40 prompts, answer order drawn at random; each system's
log-strength on a prompt is its own plus N(0, sd^2), sd 0, 0.5, 1 or 1.5, so a system's 7
comparisons on a prompt move together; on 2 to 5 prompts also each pair 3 times a prompt (``x 3
per pair``), the 3 sharing the prompt's answers. The truth of a pair's rate is its planted win
rate averaged over 10^6 seeded draws of the prompt effect; of a system's, the mean of its 7.
"""

import numpy as np

from chateval.evaluation.systems.win_rates import win_rates
from chateval.schema.systems import ProportionInterval
from simulations.davidson import all_pairs_comparisons, averaged_win_rates
from simulations.intervals.rows import Rows, summarise

# The field win rates' design: 8 systems 0.4 apart in log-strength (STRENGTHS' spacing, extended
# to 1.4 ... -1.4), with per-prompt effects of these standard deviations.
FIELD_STRENGTHS = {s: round(1.4 - 0.4 * i, 1) for i, s in enumerate("abcdefgh")}
FIELD_SPREADS = (0.0, 0.5, 1.0, 1.5)
Truth = tuple[dict[str, float], dict[tuple[str, str], float]]


def field_truth(spread: float) -> Truth:
    """What the 8 systems' win rates estimate: each system's mean planted win rate against the
    other 7, and each pair's, averaged over 10^6 draws of the prompt effect (seeded)."""
    draws = np.random.default_rng([19, int(10 * spread)]).normal(0.0, spread, (1_000_000, 2))
    pairs = averaged_win_rates(FIELD_STRENGTHS, draws)
    against = {(a, b): r for (a, b), r in pairs.items()} | {(b, a): 1 - r for (a, b), r in pairs.items()}
    field = {s: float(np.mean([against[(s, o)] for o in FIELD_STRENGTHS if o != s])) for s in FIELD_STRENGTHS}
    return field, pairs


def field_win_rate_run(
    prompts: int, spread: float, repeats: int, truth: Truth, rng: np.random.Generator
) -> tuple[list[tuple[bool, float]], list[tuple[bool, float]]]:
    """The 8 systems' win rates against the field and the 28 pairs' (coverage, width) cases of
    one run: every pair ``repeats`` times on each prompt (``all_pairs_comparisons``)."""
    field, pairs = truth
    comparisons = all_pairs_comparisons(FIELD_STRENGTHS, prompts, spread, repeats, rng)
    found = win_rates(comparisons, list(FIELD_STRENGTHS))

    def held(interval: ProportionInterval, planted: float) -> tuple[bool, float]:
        low, high = interval["ci95"]
        return low <= planted <= high, high - low

    # ``win_rates`` orients each pair as FIELD_STRENGTHS orders it, as ``pairs`` is keyed.
    return (
        [held(row["win_rate"], field[row["system"]]) for row in found["overall"]],
        [held(pair["win_rate"], pairs[(pair["system_a"], pair["system_b"])]) for pair in found["pairs"]],
    )


def field_win_rate_rows(reps: int, rows: Rows) -> None:
    # Every pair once on each prompt, and (below 5 prompts, where the prompt is the interval's
    # unit) 3 times on each prompt, the 3 sharing the prompt's answers.
    once = [(prompts, 1) for prompts in (2, 3, 4, 5, 8, 20, 40)]
    designs = once + [(prompts, 3) for prompts in (2, 3, 4, 5)]
    for spread in FIELD_SPREADS:
        truth = field_truth(spread)
        for prompts, repeats in designs:
            rng = np.random.default_rng([prompts, int(10 * spread), repeats, 64])
            runs = [field_win_rate_run(prompts, spread, repeats, truth, rng) for _ in range(reps)]
            setting = f"8 systems x {prompts} prompts" + (f" x {repeats} per pair" if repeats > 1 else "")
            setting += f", prompt effect sd {spread:g}"
            summarise("field win rate (8 systems)", setting, [c for run in runs for c in run[0]], rows)
            summarise("pair win rate (8 systems)", setting, [c for run in runs for c in run[1]], rows)
