"""Agreement with human labels, with seeded bootstrap 95% confidence intervals.

Correlations are scipy's definitions (Spearman rho, Kendall tau-b), computed with numpy for
small inputs (the tests check them against scipy on random data). Cohen's kappa is computed from the
confusion counts with numpy, because scikit-learn's ``cohen_kappa_score`` costs ~15 ms a call
and a bootstrap needs thousands; the tests check it against scikit-learn on random data.
Confidence intervals: items are resampled with replacement ``N_RESAMPLES`` times (seeded); the
interval is the 2.5th-97.5th percentile of the statistic (percentile bootstrap). When items
come in groups (Topical-Chat: 6 responses to each of 60 dialogues), whole groups are resampled
instead (cluster bootstrap): responses to one dialogue are not independent evidence, and
resampling them one by one would make the interval too narrow. Every metric is reported as
``{"value": v, "ci95": [low, high]}``.

Degenerate inputs give defined values, never NaN:
- empty input: accuracy, kappa and correlations 0.0, with ``n`` = 0;
- kappa when truth and prediction are the same single class: 1.0 (perfect agreement); when
  chance agreement is 1 otherwise: 0.0;
- a correlation where either side is constant, or with fewer than 2 pairs: 0.0 (no evidence
  of association);
- with fewer than 2 items the interval is [value, value].
"""

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from chateval.data.items import LABELS
from chateval.schema import Correlations, DirectMetrics, Interval, PairwiseMetrics

N_RESAMPLES = 1000
CORRELATION_DIMENSIONS = ("naturalness", "coherence", "engagingness", "groundedness")


def label_codes(labels: Sequence[str]) -> np.ndarray:
    return np.asarray([LABELS.index(label) for label in labels], dtype=np.int64)


def kappa_from_codes(truth: np.ndarray, predicted: np.ndarray) -> float:
    n = len(truth)
    if n == 0:
        return 0.0
    observed = float(np.mean(truth == predicted))
    k = len(LABELS)
    chance = float(np.dot(np.bincount(truth, minlength=k), np.bincount(predicted, minlength=k))) / (n * n)
    if chance >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - chance) / (1.0 - chance)


def accuracy(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Share of positions where prediction equals truth (0.0 on empty input)."""
    if len(truth) == 0:
        return 0.0
    return sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(truth)


def cohen_kappa(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Unweighted Cohen's kappa over the three labels A, B, tie."""
    return kappa_from_codes(label_codes(truth), label_codes(predicted))


# Up to this many items, Kendall's tau is computed from all pairs at once with numpy: a
# bootstrap of a small run then takes milliseconds, where scipy's per-call overhead took
# seconds. Above it scipy's O(n log n) algorithm is the faster one.
_PAIRWISE_KENDALL_MAX = 100


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
    if len(truth) > _PAIRWISE_KENDALL_MAX:
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


def correlation_pair(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    """Spearman rho and Kendall tau-b (scipy's definitions); 0.0 for a constant side."""
    if len(truth) < 2 or np.all(truth == truth[0]) or np.all(predicted == predicted[0]):
        return 0.0, 0.0
    rho = float(np.corrcoef(_average_ranks(truth), _average_ranks(predicted))[0, 1])
    tau = _kendall_tau_b(truth, predicted)
    return (0.0 if math.isnan(rho) else rho), (0.0 if math.isnan(tau) else tau)


def correlations(truth: Sequence[float], predicted: Sequence[float]) -> dict[str, float]:
    """Spearman rho and Kendall tau-b; 0.0 when either side is constant or too short."""
    rho, tau = correlation_pair(np.asarray(truth, dtype=float), np.asarray(predicted, dtype=float))
    return {"spearman": rho, "kendall": tau}


def resample_indices(
    n: int, seed: int, groups: Sequence[str] | None = None, n_resamples: int = N_RESAMPLES
) -> list[np.ndarray]:
    """``n_resamples`` bootstrap samples of item indices 0..n-1 (seeded).

    Without ``groups``: ``n`` items drawn with replacement. With ``groups`` (each item's group
    name): as many groups as there are, drawn with replacement, each bringing all its items,
    so a sample's size varies. Empty when there are fewer than 2 items or 2 groups.
    """
    rng = np.random.default_rng(seed)
    if groups is None:
        return list(rng.integers(0, n, size=(n_resamples, n))) if n >= 2 else []
    if len(groups) != n:
        raise ValueError(f"{len(groups)} group names for {n} items")
    names = np.asarray(groups)
    members = [np.flatnonzero(names == name) for name in dict.fromkeys(groups)]
    if len(members) < 2:
        return []
    draws = rng.integers(0, len(members), size=(n_resamples, len(members)))
    return [np.concatenate([members[g] for g in row]) for row in draws]


def interval(value: float, replicates: np.ndarray) -> Interval:
    """``{"value", "ci95"}``: the 2.5th-97.5th percentile of ``replicates`` around ``value``."""
    if len(replicates) == 0:
        return {"value": value, "ci95": [value, value]}
    low, high = np.percentile(replicates, [2.5, 97.5])
    return {"value": value, "ci95": [float(low), float(high)]}


def bootstrap(
    n: int, statistic: Callable[[np.ndarray], Any], seed: int, groups: Sequence[str] | None = None
) -> tuple[Any, np.ndarray]:
    """The statistic on all items and on every resample (empty when nothing can be resampled)."""
    value = statistic(np.arange(n))
    samples = resample_indices(n, seed, groups)
    if not samples:
        return value, np.empty((0,))
    return value, np.asarray([statistic(idx) for idx in samples])


def _pair_replicates(replicates: np.ndarray, column: int) -> np.ndarray:
    return replicates[:, column] if len(replicates) else replicates


def pairwise_metrics(truth: Sequence[str], predicted: Sequence[str], seed: int = 0) -> PairwiseMetrics:
    """Accuracy and kappa of predicted labels against human labels, with CIs."""
    t, p = label_codes(truth), label_codes(predicted)

    def statistic(idx: np.ndarray) -> tuple[float, float]:
        ti, pi = t[idx], p[idx]
        return (float(np.mean(ti == pi)) if len(idx) else 0.0), kappa_from_codes(ti, pi)

    (acc, kappa), reps = bootstrap(len(t), statistic, seed)
    return {
        "n": len(t),
        "label_counts": {
            "human": {label: list(truth).count(label) for label in LABELS},
            "predicted": {label: list(predicted).count(label) for label in LABELS},
        },
        "accuracy": interval(acc, _pair_replicates(reps, 0)),
        "kappa": interval(kappa, _pair_replicates(reps, 1)),
    }


def direct_metrics(
    truth: Mapping[str, Sequence[float]],
    predicted: Mapping[str, Sequence[float]],
    seed: int = 0,
    groups: Mapping[str, Sequence[str]] | None = None,
) -> DirectMetrics:
    """Per-dimension Spearman and Kendall with CIs, and their average over the paper's four
    dimensions (all scored dimensions when none of the four is present). The average needs
    every averaged dimension scored on the same items: each resample then uses the same item
    indices for every dimension, so the average's replicates are the mean of theirs.

    ``groups`` (per dimension, each item's group): resample whole groups (cluster bootstrap).
    """
    dimensions: dict[str, Correlations] = {}
    values: dict[str, tuple[float, float]] = {}
    replicates: dict[str, np.ndarray] = {}
    for d in truth:
        t, p = np.asarray(truth[d], dtype=float), np.asarray(predicted[d], dtype=float)

        def statistic(idx: np.ndarray, t: np.ndarray = t, p: np.ndarray = p) -> tuple[float, float]:
            return correlation_pair(t[idx], p[idx])

        values[d], replicates[d] = bootstrap(len(t), statistic, seed, groups[d] if groups else None)
        dimensions[d] = {
            "n": len(t),
            "spearman": interval(values[d][0], _pair_replicates(replicates[d], 0)),
            "kendall": interval(values[d][1], _pair_replicates(replicates[d], 1)),
        }
    resampled = f"{len(set(next(iter(groups.values()))))} groups" if groups and truth else "items"
    out: DirectMetrics = {"dimensions": dimensions, "resampled": resampled}
    averaged = [d for d in truth if d in CORRELATION_DIMENSIONS] or list(truth)
    if averaged and len({len(truth[d]) for d in averaged}) == 1:
        mean_value = np.mean([values[d] for d in averaged], axis=0)
        mean_reps = np.mean([replicates[d] for d in averaged], axis=0)
        out["average"] = {
            "dimensions": averaged,
            "spearman": interval(float(mean_value[0]), _pair_replicates(mean_reps, 0)),
            "kendall": interval(float(mean_value[1]), _pair_replicates(mean_reps, 1)),
        }
    return out
