"""**paired Spearman difference** and **paired Kendall difference** (``compare_direct``): the
design of ``correlations`` judged by two panels on the same responses, B's noise half A's; the
truth is the difference of their correlations over 240,000 responses.
"""

import numpy as np

from chateval.evaluation.agreement.paired import compare_direct
from simulations.intervals.correlations import scored_responses
from simulations.intervals.rows import Rows, summarise


def two_panels(
    units: int, per_unit: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
    """``scored_responses``' design judged by two panels on the same responses: A's noise 0.8
    (as there), B's 0.4 (a better judge)."""
    human, (first, second), groups = scored_responses(units, per_unit, rng, (0.8, 0.4))
    return human, first, second, groups


def planted_correlation_differences(per_unit: int) -> tuple[float, float]:
    """Panel B's Spearman and Kendall minus panel A's over 240,000 responses."""
    from scipy.stats import kendalltau, spearmanr

    human, a, b, _ = two_panels(240_000 // per_unit, per_unit, np.random.default_rng(per_unit + 7))
    return (
        float(spearmanr(human, b).statistic - spearmanr(human, a).statistic),
        float(kendalltau(human, b).statistic - kendalltau(human, a).statistic),
    )


def paired_correlation_run(
    units: int, per_unit: int, truth: tuple[float, float], seed: int, rng: np.random.Generator
) -> list[tuple[bool, float]] | None:
    """Whether the differences' intervals hold the truth, and their widths; None when either
    has no interval."""
    human, a, b, groups = two_panels(units, per_unit, rng)
    found = compare_direct(
        {"score": list(human)}, {"score": list(a)}, {"score": list(b)}, seed, groups if per_unit > 1 else None
    )
    out = []
    for name, planted in zip(("spearman", "kendall"), truth, strict=True):
        ci = found["dimensions"]["score"][name]["difference"]["ci95"]  # type: ignore[literal-required]
        if ci is None:
            return None
        out.append((ci[0] <= planted <= ci[1], ci[1] - ci[0]))
    return out


def paired_correlation_rows(reps: int, rows: Rows) -> None:
    for per_unit in (1, 6):
        truth = planted_correlation_differences(per_unit)
        for units in (6, 10, 20, 40):
            rng = np.random.default_rng([units, per_unit, 3])
            found = [paired_correlation_run(units, per_unit, truth, seed, rng) for seed in range(reps)]
            kept = [case for case in found if case is not None]
            setting = f"{units} groups x {per_unit} responses" if per_unit > 1 else f"{units} items"
            for k, statistic in enumerate(("paired Spearman difference", "paired Kendall difference")):
                summarise(statistic, setting, [case[k] for case in kept], rows)
