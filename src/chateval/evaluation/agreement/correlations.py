"""Rank correlations with the human scores: Spearman's rho and Kendall's tau-b, fast for the
bootstrap's many small resamples, and why a correlation is undefined (a constant side)."""

import math
from collections.abc import Sequence

import numpy as np

# Up to this many items, Kendall's tau is computed from all pairs at once with numpy: a
# bootstrap of a small run then takes milliseconds, where scipy's per-call overhead took
# seconds. Above it scipy's O(n log n) algorithm is the faster one.
PAIRWISE_KENDALL_MAX = 100


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank (scipy's rankdata, method "average")."""
    order = np.argsort(x, kind="mergesort")
    sorted_x = x[order]
    starts = np.concatenate(([True], sorted_x[1:] != sorted_x[:-1]))
    dense = np.cumsum(starts)  # tie group of each sorted position, from 1
    bounds = np.concatenate((np.flatnonzero(starts), [len(x)]))  # each group's first position
    average = (bounds[:-1] + bounds[1:] + 1) / 2  # mean of the 1-based ranks first+1 .. last+1
    ranks = np.empty(len(x))
    ranks[order] = average[dense - 1]
    return ranks


def _kendall_tau_b(truth: np.ndarray, predicted: np.ndarray) -> float:
    if len(truth) > PAIRWISE_KENDALL_MAX:
        from scipy.stats import kendalltau

        return float(kendalltau(truth, predicted).statistic)
    signs_t = np.sign(truth[:, None] - truth[None, :])
    signs_p = np.sign(predicted[:, None] - predicted[None, :])
    n = len(truth)
    pairs = n * (n - 1) / 2
    concordance = float(np.sum(signs_t * signs_p)) / 2  # concordant minus discordant pairs
    tied_t = (np.count_nonzero(signs_t == 0) - n) / 2  # off the diagonal, each pair twice
    tied_p = (np.count_nonzero(signs_p == 0) - n) / 2
    return concordance / math.sqrt((pairs - tied_t) * (pairs - tied_p))


def undefined_reason(truth: np.ndarray, predicted: np.ndarray) -> str | None:
    """Why a rank correlation of ``predicted`` with ``truth`` is undefined; None when it is not."""
    if len(truth) < 2:
        return "fewer than 2 scored items"
    if np.all(predicted == predicted[0]):
        return "constant prediction (every score the same ranks nothing)"
    if np.all(truth == truth[0]):
        return "constant human scores"
    return None


def correlation_pair(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float] | None:
    """Spearman rho and Kendall tau-b (scipy's definitions); None when undefined
    (``undefined_reason``)."""
    if undefined_reason(truth, predicted) is not None:
        return None
    rho = float(np.corrcoef(_average_ranks(truth), _average_ranks(predicted))[0, 1])
    tau = _kendall_tau_b(truth, predicted)
    return rho, tau


def correlation_or_nan(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    """``correlation_pair`` for bootstrap replicates: NaN marks an undefined resample, which
    ``correlation_interval`` counts and leaves out."""
    pair = correlation_pair(truth, predicted)
    return (math.nan, math.nan) if pair is None else pair


def correlations(truth: Sequence[float], predicted: Sequence[float]) -> dict[str, float | None]:
    """Spearman rho and Kendall tau-b; None when either side is constant or too short."""
    pair = correlation_pair(np.asarray(truth, dtype=float), np.asarray(predicted, dtype=float))
    return {"spearman": pair[0] if pair else None, "kendall": pair[1] if pair else None}
