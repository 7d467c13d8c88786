"""The seeded bootstrap: the direct systems' means and the paired differences take their
intervals from it, accuracy and kappa their design effect, the rank correlations their spread
(``agreement.intervals``); the win rates and the length bias have Wilson intervals clustered by
prompt instead (``systems.proportion_interval``), the leaderboard a sandwich
(``systems.davidson_intervals``).

Resampling, three ways, all seeded:
- items with replacement (``resample_indices``), ``N_RESAMPLES`` times;
- clusters (``resample_indices`` with ``groups``): whole groups drawn with replacement, each
  bringing all its rows (Topical-Chat's 6 responses to a dialogue, one item's referee rows, the
  comparisons of one prompt): rows of one group are not independent evidence, and resampling
  them one by one would make the interval too narrow;
- prompts as a count matrix (``resample_counts``): a row per resample, how often each prompt
  was drawn, so a ratio of sums over prompts has its value on every resample at once
  (``ratio_intervals``).

One interval rule (``interval``): the 2.5th-97.5th percentile of the resamples where the
statistic is defined (NaN: undefined, e.g. a ratio whose denominator is 0); ``[value, value]``
when nothing was resampled (fewer than 2 items or groups). A rank correlation's interval is
null when fewer than ``MIN_DEFINED_SHARE`` of its resamples are defined
(``difference_interval``, paired differences; the correlations' own intervals are Fisher-z
intervals from these resamples, chateval.evaluation.agreement.intervals): those few are a
biased subset (the draws that happened to vary).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from chateval.core.schema.metrics import CorrelationInterval, Interval

N_RESAMPLES = 1000
# Below this share of defined resamples a correlation's interval is null (see the module doc).
MIN_DEFINED_SHARE = 0.5


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


def bootstrap(
    n: int, statistic: Callable[[np.ndarray], Any], seed: int, groups: Sequence[str] | None = None
) -> tuple[Any, np.ndarray]:
    """The statistic on all items and on every resample (empty when nothing can be resampled)."""
    value = statistic(np.arange(n))
    samples = resample_indices(n, seed, groups)
    if not samples:
        return value, np.empty((0,))
    return value, np.asarray([statistic(idx) for idx in samples])


def interval(value: float, replicates: np.ndarray) -> Interval:
    """``{"value", "ci95"}``: the 2.5th-97.5th percentile of the defined (non-NaN)
    ``replicates`` around ``value``; ``[value, value]`` when there are none (nothing was
    resampled)."""
    defined = replicates[~np.isnan(replicates)] if len(replicates) else replicates
    if len(defined) == 0:
        return {"value": value, "ci95": [value, value]}
    low, high = np.percentile(defined, [2.5, 97.5])
    return {"value": value, "ci95": [float(low), float(high)]}


def counted(value: float | None, replicates: np.ndarray) -> tuple[CorrelationInterval, np.ndarray]:
    """A correlation's record before its interval (``ci95`` None) with the resamples counted,
    and the defined (non-NaN) ``replicates``."""
    defined = replicates[~np.isnan(replicates)] if len(replicates) else replicates
    out: CorrelationInterval = {
        "value": value,
        "ci95": None,
        "resamples": len(replicates),
        "undefined_resamples": len(replicates) - len(defined),
    }
    return out, defined


def too_few_defined(defined: np.ndarray, replicates: np.ndarray) -> str | None:
    """Why the defined resamples cannot give an interval (fewer than ``MIN_DEFINED_SHARE``),
    or None."""
    if len(defined) < MIN_DEFINED_SHARE * len(replicates):
        return f"only {len(defined)} of {len(replicates)} resamples defined"
    return None


def difference_interval(
    value: float | None, replicates: np.ndarray, reason: str | None = None
) -> CorrelationInterval:
    """A difference of correlations (paired comparisons) with the percentile interval of its
    defined replicates (NaN: undefined). Correlations themselves have Fisher-z intervals
    (chateval.evaluation.agreement.intervals).

    ``value`` None: undefined on the data, ``reason`` says why, no interval. Otherwise the
    interval is null when fewer than ``MIN_DEFINED_SHARE`` of the resamples are defined, and
    [value, value] when nothing could be resampled (fewer than 2 items or groups).
    """
    out, defined = counted(value, replicates)
    if value is None:
        out["reason"] = reason or "undefined"
    elif len(replicates) == 0:
        out["ci95"] = [value, value]
    elif few := too_few_defined(defined, replicates):
        out["reason"] = few
    else:
        low, high = np.percentile(defined, [2.5, 97.5])
        out["ci95"] = [float(low), float(high)]
    return out


def resample_counts(n_prompts: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each prompt is drawn in each bootstrap resample: an int matrix of shape
    (resamples, prompts) whose rows sum to ``n_prompts``; (0, n_prompts) when fewer than 2
    prompts (nothing to resample) or ``n_resamples`` is 0."""
    if n_prompts < 2 or n_resamples <= 0:
        return np.zeros((0, n_prompts), dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_prompts, size=(n_resamples, n_prompts))
    # One bincount over (resample, prompt) cells instead of a Python loop over resamples.
    flat = draws + n_prompts * np.arange(n_resamples)[:, None]
    return np.bincount(flat.ravel(), minlength=n_resamples * n_prompts).reshape(n_resamples, n_prompts)


def percentile_intervals(values: np.ndarray, replicates: np.ndarray) -> list[Interval]:
    """``interval`` of each column of ``replicates`` around its value."""
    return [
        interval(float(value), replicates[:, k] if replicates.size else np.empty(0))
        for k, value in enumerate(values)
    ]


def ratio_intervals(numerators: np.ndarray, denominators: np.ndarray, counts: np.ndarray) -> list[Interval]:
    """Intervals of the ratios ``sum(numerator) / sum(denominator)`` of each column, given
    per-prompt sums (prompts x columns) and the resample count matrix."""
    with np.errstate(invalid="ignore", divide="ignore"):
        values = numerators.sum(axis=0) / denominators.sum(axis=0)
        replicates = (counts @ numerators) / (counts @ denominators)
    return percentile_intervals(values, replicates)
