"""Rank correlations with the human scores: Spearman's rho and Kendall's tau-b, fast for the
bootstrap's many small resamples, and why a correlation is undefined (a constant side)."""

import math
from collections.abc import Sequence

import numpy as np

# Up to this many items, Kendall's tau is computed from all pairs at once with numpy: a
# bootstrap of a small run then takes milliseconds, where scipy's per-call overhead took
# seconds. Above it scipy's O(n log n) algorithm is the faster one.
PAIRWISE_KENDALL_MAX = 100

# Scores on a scale (1-3 against 1-10, say) have few distinct values: then every resample's
# rho and tau come from its table of counts per (truth, predicted) value pair, whatever its
# size (``table_correlations``). Up to this many cells per table (bounded memory: one table
# per resample).
TABLE_CELLS_MAX = 400


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


def _quadrant_sums(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each cell (i, j) of tables (..., I, J): the counts at (i' > i, j' > j) and at
    (i' > i, j' < j), the cells concordant and discordant with it."""
    below = np.cumsum(counts[..., ::-1, :], axis=-2)[..., ::-1, :]  # rows i' >= i
    below = np.concatenate((below[..., 1:, :], np.zeros_like(below[..., :1, :])), axis=-2)  # i' > i
    right = np.cumsum(below[..., :, ::-1], axis=-1)[..., :, ::-1]  # columns j' >= j
    right = np.concatenate((right[..., :, 1:], np.zeros_like(right[..., :, :1])), axis=-1)
    left = np.cumsum(below, axis=-1)
    left = np.concatenate((np.zeros_like(left[..., :, :1]), left[..., :, :-1]), axis=-1)
    return right, left


def table_correlations(
    truth: np.ndarray, predicted: np.ndarray, samples: Sequence[np.ndarray]
) -> np.ndarray | None:
    """Spearman rho and Kendall tau-b of every resample (rows: ``samples``, of any sizes), NaN
    where undefined, from its table of counts per (truth, predicted) value pair: O(cells) per
    resample instead of O(n log n) calls. None when the two sides have more than
    ``TABLE_CELLS_MAX`` value pairs (continuous scores)."""
    levels_t, codes_t = np.unique(truth, return_inverse=True)
    levels_p, codes_p = np.unique(predicted, return_inverse=True)
    rows, cols = len(levels_t), len(levels_p)
    if rows * cols > TABLE_CELLS_MAX:
        return None
    cells = (codes_t * cols + codes_p).ravel()
    sample_of = np.repeat(np.arange(len(samples)), [len(idx) for idx in samples])
    flat = sample_of * (rows * cols) + cells[np.concatenate(samples)]
    counts = np.bincount(flat, minlength=len(samples) * rows * cols).reshape(len(samples), rows, cols)
    counts = counts.astype(float)
    n = counts.sum(axis=(1, 2))
    by_truth, by_predicted = counts.sum(axis=2), counts.sum(axis=1)
    concordant_cells, discordant_cells = _quadrant_sums(counts)
    concordance = np.sum(counts * (concordant_cells - discordant_cells), axis=(1, 2))
    pairs = n * (n - 1) / 2
    untied_t = pairs - np.sum(by_truth * (by_truth - 1), axis=1) / 2
    untied_p = pairs - np.sum(by_predicted * (by_predicted - 1), axis=1) / 2

    def centred_ranks(totals: np.ndarray) -> np.ndarray:  # each value's average rank, minus the mean
        centred: np.ndarray = np.cumsum(totals, axis=1) - totals + (totals + 1) / 2 - (n[:, None] + 1) / 2
        return centred

    rank_t, rank_p = centred_ranks(by_truth), centred_ranks(by_predicted)
    covariance = np.einsum("rij,ri,rj->r", counts, rank_t, rank_p)
    spread_t = np.sum(by_truth * rank_t**2, axis=1)
    spread_p = np.sum(by_predicted * rank_p**2, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = covariance / np.sqrt(spread_t * spread_p)
        tau = concordance / np.sqrt(untied_t * untied_p)
    out = np.stack([rho, tau], axis=1)
    # undefined (``undefined_reason``): fewer than 2 rows, or a side constant (no untied pair)
    out[(n < 2) | (untied_t <= 0) | (untied_p <= 0)] = np.nan
    return out


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


def correlation_replicates(
    truth: np.ndarray, predicted: np.ndarray, samples: Sequence[np.ndarray]
) -> np.ndarray:
    """Spearman rho and Kendall tau-b of every resample (rows: ``samples``), NaN where undefined.

    Scores with few distinct values (a scale) go through each resample's table of counts
    (``table_correlations``, any sizes); otherwise resamples of one size (plain bootstrap, or
    clusters of equal size) are computed together as arrays: a bootstrap of a small run then
    takes milliseconds instead of a second. The values are ``correlation_or_nan``'s (the tests
    compare them)."""
    if not samples:
        return np.empty((0,))
    tabled = table_correlations(truth, predicted, samples)
    if tabled is not None:
        return tabled
    if len({len(idx) for idx in samples}) > 1 or len(samples[0]) > PAIRWISE_KENDALL_MAX:
        return np.asarray([correlation_or_nan(truth[idx], predicted[idx]) for idx in samples])
    from scipy.stats import rankdata

    t, p = truth[np.asarray(samples)], predicted[np.asarray(samples)]  # (resamples, n)
    n = t.shape[1]
    undefined = (n < 2) | np.all(t == t[:, :1], axis=1) | np.all(p == p[:, :1], axis=1)
    rank_t, rank_p = rankdata(t, axis=1), rankdata(p, axis=1)
    rank_t -= rank_t.mean(axis=1, keepdims=True)
    rank_p -= rank_p.mean(axis=1, keepdims=True)
    pairs = n * (n - 1) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        rho = np.sum(rank_t * rank_p, axis=1) / np.sqrt(np.sum(rank_t**2, axis=1) * np.sum(rank_p**2, axis=1))
        tau = np.empty(len(t))
        for start in range(0, len(t), 64):  # bounded memory: 64 x n x n signs at a time
            rows = slice(start, start + 64)
            signs_t = np.sign(t[rows, :, None] - t[rows, None, :])
            signs_p = np.sign(p[rows, :, None] - p[rows, None, :])
            concordance = np.sum(signs_t * signs_p, axis=(1, 2)) / 2
            tied_t = (np.count_nonzero(signs_t == 0, axis=(1, 2)) - n) / 2
            tied_p = (np.count_nonzero(signs_p == 0, axis=(1, 2)) - n) / 2
            tau[rows] = concordance / np.sqrt((pairs - tied_t) * (pairs - tied_p))
    out = np.stack([rho, tau], axis=1)
    out[undefined] = np.nan
    return out
