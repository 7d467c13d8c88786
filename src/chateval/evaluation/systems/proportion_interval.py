"""Intervals for a proportion of outcomes in [0, 1] clustered by prompt: the win rates (a win 1,
a tie 0.5, a loss 0, or the panel's soft probability) and the length bias' share.

The method is an effective-sample-size Wilson interval with a degrees-of-freedom-adjusted
quantile (Wilson 1927, "Probable inference, the law of succession, and statistical inference";
Korn & Graubard 1998, "Confidence intervals for proportions with small expected number of
positive counts estimated from survey data"). With per-prompt sums s_g of N outcomes over
n_g comparisons on G prompts:

- the estimate is p = S / N (S the sum of all outcomes);
- the Bernoulli bound: an outcome in [0, 1] with mean p has variance at most p (1 - p), which a
  win rate with ties reaches when there are none, so V_iid = p (1 - p) / N bounds the variance of
  p for independent comparisons;
- the cluster-robust (prompt = cluster) variance of the ratio,
  V_cr = G / (G - 1) * sum_g (s_g - p n_g)^2 / N^2, measures how much the comparisons of one
  prompt move together (they share its difficulty and its answers);
- the design effect deff = max(1, V_cr / V_iid) shrinks the count to n_eff = N / deff (deff is 1
  when p is 0 or 1: both variances are then 0);
- the quantile is Student t with G - 1 degrees of freedom, since V_cr is estimated from G
  clusters;
- the interval is Wilson's score interval with n_eff and that quantile q, centre
  (p + q^2 / (2 n)) / (1 + q^2 / n), half-width q / (1 + q^2 / n) sqrt(p (1 - p) / n + q^2 / (4 n^2)).

Unlike a bootstrap or a normal interval, Wilson's is never zero-width for N >= 1 (1 win and 11
ties on 12 prompts give about [0.262, 0.797]) and stays within [0, 1].
With fewer than ``MIN_PROMPTS_CLUSTERED`` prompts the cluster variance rests on too few prompts
to be trusted: the comparisons are taken as independent (deff 1) and the interval is the exact
Clopper-Pearson one of S successes in N (chateval.evaluation.binomial), which covers at least
95% for independent comparisons whatever N and p, where Wilson's dips below (the length share
of 4 prompts: 93.4% over 2,000 simulated runs in release 4); with prompt effects it held 96.2%
to 96.5% at 2 and 4 prompts (scripts/simulate_intervals.py). The interval says so (``method``).

Soft win rates (``mean_intervals``) are means of probabilities, not of wins and losses: their
spread is measured, not bounded (the Bernoulli bound would give a soft rate of 0.52 over 12
comparisons an interval of [0.25, 0.79]). From ``MIN_PROMPTS_CLUSTERED`` prompts on, the
variance is the larger of the independent one (the sample variance over N) and the
prompt-clustered V_cr, read with t on G - 1 degrees of freedom: a Wald interval clipped to
[0, 1]. With fewer prompts a measured spread is not to be trusted (two soft values of 0.49 would
give +-0.01), and when the values do not vary at all there is none: then the soft rate gets the
interval a hard win rate gets (Wilson's, or the exact one below 5 prompts).
"""

from typing import Literal, NotRequired

import numpy as np
from scipy.stats import t

from chateval.core.schema.metrics import Interval
from chateval.evaluation.binomial import CONFIDENCE, clopper_pearson_bounds

MIN_PROMPTS_CLUSTERED = 5  # fewer prompts: no design effect, comparisons taken as independent

# "wilson-independent": runs scored before release 5, below MIN_PROMPTS_CLUSTERED prompts
Method = Literal["wilson-cluster", "clopper-pearson-independent", "wilson-independent", "t-cluster"]


class ProportionInterval(Interval):
    """A proportion with its 95% interval, how it was computed (``method``) and the effective
    number of comparisons behind it (``effective_n``, N over the design effect). Runs written
    before these intervals have a percentile bootstrap interval and neither key."""

    method: NotRequired[Method]
    effective_n: NotRequired[float]


def per_prompt(
    prompt: np.ndarray, column: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    """Sum ``values`` into a (prompts x columns) matrix at (prompt, column): the per-prompt sums
    that ``proportion_intervals`` takes."""
    out = np.zeros(shape)
    np.add.at(out, (prompt, column), values)
    return out


def wilson(p: np.ndarray, n: np.ndarray, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Wilson's score interval of proportions ``p`` from ``n`` (effective) observations at
    quantiles ``q``, elementwise: lower and upper bounds, within [0, 1]."""
    ratio = q**2 / n
    centre = (p + ratio / 2) / (1 + ratio)
    half = q / (1 + ratio) * np.sqrt(p * (1 - p) / n + ratio / (4 * n))
    # Wilson's bounds hold p and lie in [0, 1] exactly; these only remove rounding (p = 1 gave
    # an upper bound of 1 - 1e-16).
    return np.clip(np.minimum(centre - half, p), 0.0, 1.0), np.clip(np.maximum(centre + half, p), 0.0, 1.0)


def _clustered_ratio(
    sums: np.ndarray, totals: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per column of per-prompt sums and counts: the count N, the ratio p, the prompts G (at
    least 2, so that G - 1 never divides by 0), whether G reaches ``MIN_PROMPTS_CLUSTERED``, and
    the prompt-clustered variance V_cr of p (only clustered columns use it)."""
    n = totals.sum(axis=0)
    if np.any(n <= 0):
        raise ValueError("every column needs at least one observation")
    p = sums.sum(axis=0) / n
    prompts = (totals > 0).sum(axis=0)
    g = np.maximum(prompts, 2)
    v_cr = g / (g - 1) * ((sums - p * totals) ** 2).sum(axis=0) / n**2
    return n, p, g, prompts >= MIN_PROMPTS_CLUSTERED, v_cr


def proportion_intervals(sums: np.ndarray, totals: np.ndarray) -> list[ProportionInterval]:
    """The proportion ``sum(sums) / sum(totals)`` of each column with its 95% interval (the
    module doc's method), from per-prompt sums of outcomes in [0, 1] and per-prompt counts
    (prompts x columns; a 1-D pair is one column). Prompts with a count of 0 take no part;
    every column needs at least one observation."""
    sums, totals = np.asarray(sums, dtype=float), np.asarray(totals, dtype=float)
    if sums.ndim == 1:
        sums, totals = sums[:, None], totals[:, None]
    n, p, g, clustered, v_cr = _clustered_ratio(sums, totals)
    v_iid = p * (1 - p) / n
    with np.errstate(invalid="ignore", divide="ignore"):
        deff = np.where(clustered & (v_iid > 0), np.maximum(1.0, v_cr / v_iid), 1.0)
    effective = n / deff
    # Every column at once: Wilson's for the clustered ones, the exact interval for the others.
    low, high = wilson(p, effective, t.ppf(1 - (1 - CONFIDENCE) / 2, g - 1))
    exact_low, exact_high = clopper_pearson_bounds(p * n, n)
    low, high = (
        np.where(clustered, low, np.minimum(exact_low, p)),
        np.where(clustered, high, np.maximum(exact_high, p)),
    )
    return [
        {
            "value": float(p[k]),
            "ci95": [float(low[k]), float(high[k])],
            "method": "wilson-cluster" if clustered[k] else "clopper-pearson-independent",
            "effective_n": float(effective[k]),
        }
        for k in range(len(p))
    ]


def mean_intervals(sums: np.ndarray, squares: np.ndarray, totals: np.ndarray) -> list[ProportionInterval]:
    """The mean ``sum(sums) / sum(totals)`` of each column of values in [0, 1] with its 95%
    interval from their measured spread (the module doc's soft win rates), given per-prompt
    sums, sums of squares and counts (prompts x columns)."""
    n, p, g, clustered, v_cr = _clustered_ratio(sums, totals)
    spread = np.maximum(squares.sum(axis=0) - n * p**2, 0.0)  # sum of (x - p)^2
    v_iid = spread / np.maximum(n - 1, 1) / n
    variance = np.maximum(v_iid, v_cr)
    q = t.ppf(1 - (1 - CONFIDENCE) / 2, g - 1)
    half = q * np.sqrt(variance)
    bounded = proportion_intervals(sums, totals)
    out: list[ProportionInterval] = []
    for k in range(len(p)):
        # Too few prompts to trust a measured spread (two soft values of 0.49 would give
        # +-0.01), or none at all: the Bernoulli bound's interval, as for hard win rates.
        if not clustered[k] or variance[k] <= 0:
            out.append(bounded[k])
            continue
        out.append(
            {
                "value": float(p[k]),
                "ci95": [float(max(0.0, p[k] - half[k])), float(min(1.0, p[k] + half[k]))],
                "method": "t-cluster",
                "effective_n": float(p[k] * (1 - p[k]) / variance[k])
                if p[k] * (1 - p[k]) > 0
                else float(n[k]),
            }
        )
    return out
