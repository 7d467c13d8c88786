"""The seeded percentile bootstrap over prompts that the intervals of the direct means come from
(the win rates and the length bias have Wilson intervals clustered by prompt instead,
``proportion_interval``; the leaderboard a sandwich, ``davidson_intervals``).

Every interval resamples *prompts* with replacement and keeps all comparisons of a drawn prompt:
the comparisons of one prompt share its difficulty and its answers, so they are not independent
evidence, and resampling them one by one would make the interval too narrow (the cluster
bootstrap of ``metrics.py``, with the prompt as the cluster).

The bootstrap is vectorised: a resample is a row of a (resamples x prompts) matrix of draw
counts (``resample_counts``). A statistic that is a ratio of sums over comparisons has its
value on every resample at once as the count matrix times per-prompt sums (``ratio_intervals``).
With fewer than 2 prompts nothing is
resampled and an interval is ``[value, value]`` (as in ``metrics.py``); a resample in which a
statistic is undefined (NaN: its denominator is 0) is left out of that statistic's percentiles.
"""

import numpy as np

from chateval.core.schema.metrics import Interval

N_RESAMPLES = 1000  # the default of the direct means


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
    """``{"value", "ci95"}`` for each column: the 2.5th-97.5th percentile of its defined
    (non-NaN) replicates; ``[value, value]`` when there are none (nothing was resampled)."""
    out: list[Interval] = []
    for k, value in enumerate(values):
        column = replicates[:, k] if replicates.size else np.empty(0)
        defined = column[~np.isnan(column)]
        if len(defined) == 0:
            out.append({"value": float(value), "ci95": [float(value), float(value)]})
            continue
        low, high = np.percentile(defined, [2.5, 97.5])
        out.append({"value": float(value), "ci95": [float(low), float(high)]})
    return out


def ratio_intervals(numerators: np.ndarray, denominators: np.ndarray, counts: np.ndarray) -> list[Interval]:
    """Intervals of the ratios ``sum(numerator) / sum(denominator)`` of each column, given
    per-prompt sums (prompts x columns) and the resample count matrix."""
    with np.errstate(invalid="ignore", divide="ignore"):
        values = numerators.sum(axis=0) / denominators.sum(axis=0)
        replicates = (counts @ numerators) / (counts @ denominators)
    return percentile_intervals(values, replicates)
