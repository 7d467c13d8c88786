"""Intervals of agreement with human labels that hold with few labels: accuracy and Cohen's
kappa (pairwise), Spearman's and Kendall's rank correlations (direct scoring).

A percentile bootstrap fails where chateval's users live: 5 of 5 right gives [1, 1] (every
resample is 5 of 5), which claims certainty from five labels. Both intervals here start from
the exact binomial interval of the observed agreement p_o (the share of labelled rows the
prediction got right), which never has zero width and never covers less than 95% for
independent rows (Clopper & Pearson 1934, "The use of confidence or fiducial
limits illustrated in the case of the binomial"):

- **rows that are not independent** (one item's referee rows, pooled per model; an item's two
  answer orders) shrink the count to an effective n: n_eff = n / deff, the design effect deff
  = max(1, V / V_iid), V the variance of the statistic over the (cluster) bootstrap's resamples
  and V_iid its variance were the n rows independent; with G clusters, n_eff is further scaled
  by (z / t_{G-1})^2, the quantile's degrees of freedom (Korn & Graubard 1998, "Confidence
  intervals for proportions with small expected number of positive counts estimated from
  survey data"). The interval is Clopper-Pearson's with p_o n_eff successes out of n_eff
  (beta quantiles take fractional counts). When every row is right (or every row wrong) the
  variance measures nothing and the count is the number of clusters. A few wrong rows measure
  it poorly too (one wrong row of 80 looks like independence), so no clustered interval claims
  more than the all-right one does: its lower bound is at most the all-right lower bound, its
  upper at least the all-wrong upper bound, which keeps the bounds monotone in the count right
  (40 items x 2 orders: 80 of 80 gives 0.912; 79 of 80 gave 0.929 before this rule);
- **accuracy** is p_o: its interval is that one (for independent rows, n itself);
- **kappa** is (p_o - p_e) / (1 - p_e), increasing in p_o at the observed chance agreement
  p_e: its interval is p_o's mapped through that line, clipped to [-1, 1], with the design
  effect measured on kappa's own resamples (V: the variance of kappa times (1 - p_e)^2,
  V_iid: p_o (1 - p_o) / n). Where p_e varies little the design effect is 1 and the interval
  is exact in p_o; where its variation matters (many labels, a skewed mix) the design effect
  widens the interval by it. When every human label and every prediction is one class
  (p_e = 1) kappa is set by convention and nothing bounds it: [-1, 1].

A rank correlation r (``correlation_interval``) gets a Fisher-z interval: tanh(atanh(r) +-
t_{k-1} s), s the standard deviation of atanh over the (cluster) bootstrap's defined resamples
scaled by sqrt(k / (k - 1)) (a bootstrap of k units underestimates the variance by (k - 1) / k),
k the resampled units (items, or groups: Topical-Chat's dialogues), at least Fisher's
1 / sqrt(n - 3) for n scored rows, so that data that happen not to vary in any resample (a
perfect ranking of 5 items) still get a width. Student's t for the few units is what a
percentile interval lacks with 6 dialogues. r is held within
+-0.995 for the transform (atanh(1) is infinite), and the interval always holds r itself.

The simulations in scripts/simulate_intervals.py (docs/performance/intervals.json) show each
covering at least 94% where chateval uses it: accuracy and kappa from 5 to 200 labels,
independent or with an item's rows clustered; correlations from 6 to 40 items or groups.
"""

from typing import Literal

import numpy as np
from scipy.stats import norm, t

from chateval.core.schema.metrics import AgreementInterval, CorrelationInterval
from chateval.evaluation.binomial import CONFIDENCE, clopper_pearson
from chateval.evaluation.bootstrap import counted, too_few_defined

CORRELATION_CLIP = 0.995  # |r| for the Fisher transform (atanh(1) is infinite)
Method = Literal["clopper-pearson", "clopper-pearson-clustered"]


def effective_n(n: int, variance: float, iid_variance: float, clusters: int | None) -> float:
    """``n`` over the design effect (at least 1), scaled for the ``clusters``' degrees of
    freedom. The clusters themselves are the count when there are fewer than 2, and when every
    row is right or every row wrong: then nothing measures how much an item's rows move
    together, and taking them as independent would claim an item's two answer orders as two
    items' evidence (40 items right in both orders would exclude 0.94)."""
    if clusters is not None and (clusters < 2 or iid_variance <= 0):
        return float(clusters)
    deff = max(1.0, variance / iid_variance) if iid_variance > 0 and np.isfinite(variance) else 1.0
    count = n / deff
    if clusters is not None:
        upper = 1 - (1 - CONFIDENCE) / 2
        count *= (norm.ppf(upper) / t.ppf(upper, clusters - 1)) ** 2
    return float(count)


def _variance(replicates: np.ndarray) -> float:
    defined = replicates[~np.isnan(replicates)] if len(replicates) else replicates
    return float(np.var(defined)) if len(defined) > 1 else float("nan")


def observed_bounds(p_o: float, count: float, clusters: int | None) -> tuple[float, float]:
    """Clopper-Pearson's bounds of ``p_o`` at the effective ``count``, no narrower at either end
    than those of every row right (wrong) over ``clusters`` (the module doc)."""
    low, high = clopper_pearson(p_o * count, count)
    if clusters is not None and clusters > 0:
        all_right_low, _ = clopper_pearson(clusters, clusters)
        _, all_wrong_high = clopper_pearson(0, clusters)
        low, high = min(low, all_right_low), max(high, all_wrong_high)
    return low, high


def _method(clusters: int | None) -> Method:
    return "clopper-pearson" if clusters is None else "clopper-pearson-clustered"


def accuracy_interval(
    accuracy: float, n: int, replicates: np.ndarray, clusters: int | None
) -> AgreementInterval:
    """Accuracy ``accuracy`` of ``n`` rows with its interval (the module doc), given the
    bootstrap's accuracy ``replicates`` and the number of ``clusters`` (None: rows independent,
    the count is ``n`` and the interval exact)."""
    count = float(n)
    if clusters is not None:
        count = effective_n(n, _variance(replicates), accuracy * (1 - accuracy) / max(n, 1), clusters)
    low, high = observed_bounds(accuracy, count, clusters)
    return {"value": accuracy, "ci95": [low, high], "method": _method(clusters), "effective_n": count}


def kappa_interval(
    kappa: float, observed: float, chance: float, n: int, replicates: np.ndarray, clusters: int | None
) -> AgreementInterval:
    """Cohen's kappa of ``n`` rows with its interval (the module doc), given the observed and
    chance agreement it came from, the bootstrap's kappa ``replicates`` and the ``clusters``."""
    if chance >= 1.0 or n == 0:
        return {"value": kappa, "ci95": [-1.0, 1.0], "method": _method(clusters), "effective_n": float(n)}
    variance = _variance(replicates) * (1 - chance) ** 2  # kappa's spread on p_o's scale
    count = effective_n(n, variance, observed * (1 - observed) / n, clusters)
    low, high = observed_bounds(observed, count, clusters)

    def mapped(p: float) -> float:
        return float(np.clip((p - chance) / (1 - chance), -1.0, 1.0))

    # The value itself always lies inside (min/max remove rounding at p_o = 0 or 1).
    return {
        "value": kappa,
        "ci95": [min(mapped(low), kappa), max(mapped(high), kappa)],
        "method": _method(clusters),
        "effective_n": count,
    }


def correlation_interval(
    value: float | None, replicates: np.ndarray, units: int, rows: int, reason: str | None = None
) -> CorrelationInterval:
    """A rank correlation of ``rows`` scored rows with its Fisher-z interval (the module doc)
    from its bootstrap ``replicates`` (NaN: undefined in that resample) over ``units`` items
    or groups.

    ``value`` None: undefined on the data, ``reason`` says why, no interval. Also no interval
    (with the reason) with fewer than 3 units, or when fewer than half the resamples are
    defined (``bootstrap.too_few_defined``)."""
    out, defined = counted(value, replicates)
    if value is None:
        out["reason"] = reason or "undefined"
    elif units < 3 or len(replicates) == 0:
        out["reason"] = f"{units} items or groups: too few for an interval"
    elif few := too_few_defined(defined, replicates):
        out["reason"] = few
    else:
        z = np.arctanh(np.clip(defined, -CORRELATION_CLIP, CORRELATION_CLIP))
        spread = float(np.std(z)) * np.sqrt(units / (units - 1))
        spread = max(spread, 1 / np.sqrt(max(rows - 3, 1)))
        half = float(t.ppf(1 - (1 - CONFIDENCE) / 2, units - 1)) * spread
        centre = float(np.arctanh(np.clip(value, -CORRELATION_CLIP, CORRELATION_CLIP)))
        low, high = float(np.tanh(centre - half)), float(np.tanh(centre + half))
        out["ci95"] = [min(low, value), max(high, value)]
        out["method"] = "fisher-z"
    return out


def correlation_difference_interval(
    a: float, b: float, replicates_a: np.ndarray, replicates_b: np.ndarray, units: int, rows: int
) -> CorrelationInterval:
    """The difference b - a of two rank correlations on the same items (two runs, or a run's
    blind vote and final decision) with Zou's interval (Zou 2007, "Toward using confidence
    intervals to compare correlations"): each side's own interval (``correlation_interval``)
    combined through the correlation c of the two sides' bootstrap replicates,

        b - a - sqrt((b - l_b)^2 + (u_a - a)^2 - 2 c (b - l_b)(u_a - a)),
        b - a + sqrt((u_b - b)^2 + (a - l_a)^2 - 2 c (u_b - b)(a - l_a)).

    It inherits each side's t quantile and width floor, so two runs that agree on every item
    still get a width. No interval (with the reason) where a side has none."""
    out, _ = counted(b - a, replicates_b - replicates_a)
    first = correlation_interval(a, replicates_a, units, rows)
    second = correlation_interval(b, replicates_b, units, rows)
    if first["ci95"] is None or second["ci95"] is None:
        out["reason"] = first.get("reason") or second.get("reason") or "no interval for a side"
        return out
    (low_a, high_a), (low_b, high_b) = first["ci95"], second["ci95"]
    both = ~(np.isnan(replicates_a) | np.isnan(replicates_b))
    spread = np.std(replicates_a[both]) * np.std(replicates_b[both]) if both.sum() > 1 else 0.0
    c = float(np.corrcoef(replicates_a[both], replicates_b[both])[0, 1]) if spread > 0 else 0.0

    def arm(of_b: float, of_a: float) -> float:
        """One side of the difference's interval from the two sides' arms facing it."""
        return float(np.sqrt(max(of_b**2 + of_a**2 - 2 * c * of_b * of_a, 0.0)))

    below, above = arm(b - low_b, high_a - a), arm(high_b - b, a - low_a)
    out["ci95"] = [max(b - a - below, -2.0), min(b - a + above, 2.0)]
    out["method"] = "zou-fisher-z"
    return out
