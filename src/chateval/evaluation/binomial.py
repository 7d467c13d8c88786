"""The exact (Clopper-Pearson) binomial interval, shared by the agreement intervals (accuracy,
kappa) and the systems' proportions below 5 prompts (win rates, the length share).

Clopper & Pearson 1934, "The use of confidence or fiducial limits illustrated in the case of
the binomial": the 95% interval of x successes in n trials is [B(0.025; x, n - x + 1),
B(0.975; x + 1, n - x)] with B the beta distribution's quantiles, 0 and 1 at x = 0 and x = n.
It covers at least 95% for every true proportion and every n, never has zero width and stays
within [0, 1]. Counts may be fractional (an effective count: n over a design effect)."""

import numpy as np
from scipy.stats import beta

CONFIDENCE = 0.95


def clopper_pearson_bounds(successes: np.ndarray, n: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Elementwise lower and upper 95% bounds of ``successes`` out of ``n`` (n > 0)."""
    x, n = np.asarray(successes, dtype=float), np.asarray(n, dtype=float)
    tail = (1 - CONFIDENCE) / 2
    with np.errstate(invalid="ignore", divide="ignore"):
        low = np.where(x <= 0, 0.0, beta.ppf(tail, np.maximum(x, 1e-12), n - x + 1))
        high = np.where(x >= n, 1.0, beta.ppf(1 - tail, x + 1, np.maximum(n - x, 1e-12)))
    return low, high


def clopper_pearson(successes: float, n: float) -> tuple[float, float]:
    """The exact 95% interval of ``successes`` out of ``n`` (both may be fractional); [0, 1]
    when ``n`` is 0."""
    if n <= 0:
        return 0.0, 1.0
    low, high = clopper_pearson_bounds(np.asarray(successes), np.asarray(n))
    return float(low), float(high)
