"""Agreement with human labels, with seeded bootstrap 95% confidence intervals.

Correlations are scipy's (Spearman rho, Kendall tau-b). Cohen's kappa is computed from the
confusion counts with numpy, because scikit-learn's ``cohen_kappa_score`` costs ~15 ms a call
and a bootstrap needs thousands; the tests check it against scikit-learn on random data.
Confidence intervals: items are resampled with replacement ``N_RESAMPLES`` times (seeded); the
interval is the 2.5th-97.5th percentile of the statistic (percentile bootstrap). Every metric
is reported as ``{"value": v, "ci95": [low, high]}``.

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

N_RESAMPLES = 1000
CORRELATION_DIMENSIONS = ("naturalness", "coherence", "engagingness", "groundedness")


def _codes(labels: Sequence[str]) -> np.ndarray:
    return np.asarray([LABELS.index(label) for label in labels], dtype=np.int64)


def _kappa_from_codes(truth: np.ndarray, predicted: np.ndarray) -> float:
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
    return _kappa_from_codes(_codes(truth), _codes(predicted))


def _correlations(truth: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    from scipy.stats import kendalltau, spearmanr

    if len(truth) < 2 or np.all(truth == truth[0]) or np.all(predicted == predicted[0]):
        return 0.0, 0.0
    rho = float(spearmanr(truth, predicted).statistic)
    tau = float(kendalltau(truth, predicted).statistic)
    return (0.0 if math.isnan(rho) else rho), (0.0 if math.isnan(tau) else tau)


def correlations(truth: Sequence[float], predicted: Sequence[float]) -> dict[str, float]:
    """Spearman rho and Kendall tau-b; 0.0 when either side is constant or too short."""
    rho, tau = _correlations(np.asarray(truth, dtype=float), np.asarray(predicted, dtype=float))
    return {"spearman": rho, "kendall": tau}


def resample_indices(n: int, seed: int, n_resamples: int = N_RESAMPLES) -> np.ndarray:
    """``n_resamples`` rows of ``n`` item indices drawn with replacement (seeded)."""
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def _summary(value: float, replicates: np.ndarray) -> dict[str, Any]:
    if len(replicates) == 0:
        return {"value": value, "ci95": [value, value]}
    low, high = np.percentile(replicates, [2.5, 97.5])
    return {"value": value, "ci95": [float(low), float(high)]}


def _bootstrap(n: int, statistic: Callable[[np.ndarray], Any], seed: int) -> tuple[Any, np.ndarray]:
    """The statistic on all items and on every resample (empty when n < 2)."""
    value = statistic(np.arange(n))
    if n < 2:
        return value, np.empty((0,))
    return value, np.asarray([statistic(idx) for idx in resample_indices(n, seed)])


def _pair_replicates(replicates: np.ndarray, column: int) -> np.ndarray:
    return replicates[:, column] if len(replicates) else replicates


def pairwise_metrics(truth: Sequence[str], predicted: Sequence[str], seed: int = 0) -> dict[str, Any]:
    """Accuracy and kappa of predicted labels against human labels, with CIs."""
    t, p = _codes(truth), _codes(predicted)

    def statistic(idx: np.ndarray) -> tuple[float, float]:
        ti, pi = t[idx], p[idx]
        return (float(np.mean(ti == pi)) if len(idx) else 0.0), _kappa_from_codes(ti, pi)

    (acc, kappa), reps = _bootstrap(len(t), statistic, seed)
    return {
        "n": len(t),
        "label_counts": {
            "human": {label: list(truth).count(label) for label in LABELS},
            "predicted": {label: list(predicted).count(label) for label in LABELS},
        },
        "accuracy": _summary(acc, _pair_replicates(reps, 0)),
        "kappa": _summary(kappa, _pair_replicates(reps, 1)),
    }


def direct_metrics(
    truth: Mapping[str, Sequence[float]], predicted: Mapping[str, Sequence[float]], seed: int = 0
) -> dict[str, Any]:
    """Per-dimension Spearman and Kendall with CIs, and their average over the paper's four
    dimensions (all scored dimensions when none of the four is present). The average needs
    every averaged dimension scored on the same items: each resample then uses the same item
    indices for every dimension, so the average's replicates are the mean of theirs."""
    out: dict[str, Any] = {"dimensions": {}}
    values: dict[str, tuple[float, float]] = {}
    replicates: dict[str, np.ndarray] = {}
    for d in truth:
        t, p = np.asarray(truth[d], dtype=float), np.asarray(predicted[d], dtype=float)

        def statistic(idx: np.ndarray, t: np.ndarray = t, p: np.ndarray = p) -> tuple[float, float]:
            return _correlations(t[idx], p[idx])

        values[d], replicates[d] = _bootstrap(len(t), statistic, seed)
        out["dimensions"][d] = {
            "n": len(t),
            "spearman": _summary(values[d][0], _pair_replicates(replicates[d], 0)),
            "kendall": _summary(values[d][1], _pair_replicates(replicates[d], 1)),
        }
    averaged = [d for d in truth if d in CORRELATION_DIMENSIONS] or list(truth)
    if averaged and len({len(truth[d]) for d in averaged}) == 1:
        mean_value = np.mean([values[d] for d in averaged], axis=0)
        mean_reps = np.mean([replicates[d] for d in averaged], axis=0)
        out["average"] = {
            "dimensions": averaged,
            "spearman": _summary(float(mean_value[0]), _pair_replicates(mean_reps, 0)),
            "kendall": _summary(float(mean_value[1]), _pair_replicates(mean_reps, 1)),
        }
    return out
