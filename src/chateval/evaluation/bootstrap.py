"""The seeded bootstrap: accuracy and kappa take their design effect from it, the rank
correlations (and their paired differences) their spread (``agreement.intervals``); the win
rates and the length bias have Wilson intervals clustered by prompt instead
(``systems.proportion_interval``), the leaderboard a sandwich (``systems.davidson_intervals``),
the direct systems' means ``systems.mean_interval``.

Resampling, two ways, both seeded:
- items with replacement (``resample_indices``), ``N_RESAMPLES`` times;
- clusters (``resample_indices`` with ``groups``): whole groups drawn with replacement, each
  bringing all its rows (Topical-Chat's 6 responses to a dialogue, one item's referee rows, the
  comparisons of one prompt): rows of one group are not independent evidence, and resampling
  them one by one would make the interval too narrow.

A statistic may be undefined on a resample (NaN: a constant side of a rank correlation);
``counted`` counts those, and a rank correlation gets no interval when fewer than
``MIN_DEFINED_SHARE`` of its resamples are defined (``too_few_defined``): those few are a biased
subset (the draws that happened to vary).
"""

from collections.abc import Sequence

import numpy as np

from chateval.schema.agreement import CorrelationInterval

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
