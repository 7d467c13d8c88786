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
- **kappa** is (p_o - p_e) / (1 - p_e). Its interval holds two (the hull, clipped to [-1, 1]):
  p_o's exact interval mapped through that line at the observed chance agreement p_e, with the
  design effect measured on kappa's own resamples (V: the variance of kappa times (1 - p_e)^2,
  V_iid: p_o (1 - p_o) / n), which never has zero width and keeps 5 labels honest; and the
  bias-corrected percentile interval of kappa's (cluster) bootstrap (Efron 1981,
  "Nonparametric standard errors and confidence intervals"): the replicates' quantiles at
  Phi(2 z0 -+ 1.96), z0 = Phi^-1 of the share of replicates below kappa (ties count half).
  The first alone, the interval of earlier releases, treats p_e as known, which it is not:
  p_e comes from the same few labels, and where a panel does worse than chance it missed,
  nearly always with the truth below (true kappa -0.5: 65.3% at 10 labels, 91.2% at 40; a
  skewed mix A 80 / B 15 / tie 5 at kappa -0.3: 76.4% at 10, 93.5% at 200), and no label right
  gave the estimate itself as the lower bound (20 labels, 14 of them A: -0.493 [-0.493,
  -0.241]; now [-0.737, -0.208]). The bootstrap redraws p_e with p_o and so carries both. Its
  bias correction matters with a skewed mix: kappa there rests on the few minority labels,
  its estimate is pulled towards 0 when a sample has fewer of them than usual, and its
  resamples show that pull (most of them fall on one side of the estimate), which the
  correction follows. Where p_e varies little the bootstrap interval lies (almost) inside the
  exact one, which then decides: with kappa 0 to 0.9 the interval is at most 5% wider than
  before from 10 labels on. Not chosen: a symmetric interval around the estimate, with
  Fleiss, Cohen and Everitt's large-sample variance (1969) or the bootstrap's, whose spread is
  smallest exactly where the estimate is pulled towards 0, so it still missed the skewed
  mix's -0.3 at 20 labels; the worst p_e within p_e's own interval (an alpha split), which
  ignores that p_o and p_e move together and is far wider; and test inversion, which needs the
  whole table of labels and a search over its margins for each bound. When every human label
  and every prediction is one class (p_e = 1) kappa is set by convention, and when one side's
  labels are all one class kappa is 0 whatever the other side says (p_o = p_e), and so are its
  resamples: nothing in the sample bounds it, and the interval is [-1, 1].

A rank correlation r (``correlation_interval``) gets a Fisher-z interval: tanh(atanh(r) +-
t_{k-1} s), s the standard deviation of atanh over the (cluster) bootstrap's defined resamples
scaled by sqrt(k / (k - 1)) (a bootstrap of k units underestimates the variance by (k - 1) / k),
k the resampled units (items, or groups: Topical-Chat's dialogues), at least Fisher's
1 / sqrt(n - 3) for n scored rows, so that data that happen not to vary in any resample (a
perfect ranking of 5 items) still get a width. Student's t for the few units is what a
percentile interval lacks with 6 dialogues. r is held within +-0.995 for the transform
(atanh(1) is infinite), and the interval always holds r itself. As with accuracy's all-right
rule, no interval claims more than a perfect ranking of its k units would: its lower bound is
at most tanh(atanh(0.995) - t_{k-1} / sqrt(k - 3)), its upper bound at least the negative of
that. Over groups it counts groups, not rows, where the bootstrap sees almost no variation
(6 perfectly ranked groups of 6 printed [0.988, 1.000] with the floor in rows alone).

Fisher's z takes r's variance to vanish like (1 - rho^2)^2 towards +-1, as it does for
continuous scores. On coarse tied scales (humans 1-3, a panel 1-5) a near-perfect panel falls
short of +-1 by a few misranked rows, and r's variance shrinks only like 1 - rho^2, as a
proportion's does like p (1 - p): a small sample then often ranks (nearly) perfectly though
the population does not, the bootstrap of that sample sees almost no variation, and the
interval above missed (a panel at Spearman 0.91 over 10 single items: 73.6%; its Kendall over
6: 58.8%). So the interval also holds every rho from which r lies within t_{k-1} standard
deviations at the variance c (1 - rho^2) / n (``misranked_bounds``): the roots of
(r - rho)^2 = a (1 - rho^2), a = t^2 c / n, inverted as Wilson's score interval inverts a
proportion's, which gives a perfect ranking (1 - a) / (1 + a) to 1, never a point (20 items:
[0.718, 1], where the Fisher-z interval said [0.986, 1]; 6 groups of 6: [0.758, 1]). With
c = 3/4 a perfect ranking of 6 to 40 items does not exclude a panel that ranks as the humans
do but scores a share of the items at random, where that panel ranks them perfectly 2.5% of
the time or more (tests/evaluation/test_agreement_intervals.py; at 40 items, with the least
room, its tau is 0.874 and the lower bound 0.858). A panel whose few errors sit at the
far end of the scale could need up to c = 2 (Daniels and Kendall's bound var(tau) <= 2 (1 -
tau^2) / n, with which a perfect ranking of 20 items would show only tau >= 0.39): that worst
case is not guarded. A typical panel's interval (Spearman 0.5), whose spread the bootstrap
measures, is mostly wider than this bound and keeps its width (20 items: 0.784 before the
bound, 0.791 with it).

The simulations in scripts/simulate_intervals.py (docs/performance/intervals.json) show each
covering at least 94% where chateval uses it: accuracy and kappa from 5 to 200 labels,
independent or with an item's rows clustered (kappa planted from -0.5 to 0.9 from 10 labels,
also on a skewed label mix: at least 94.7%); correlations from 6 to 40 items or groups, of
a typical panel, of near-perfect ones and of one that scores 10% of the items at random.
"""

from collections.abc import Sequence
from typing import Literal

import numpy as np
from scipy.stats import norm, t

from chateval.evaluation.binomial import CONFIDENCE, clopper_pearson
from chateval.evaluation.bootstrap import counted, too_few_defined
from chateval.schema.agreement import AgreementInterval, CorrelationInterval

CORRELATION_CLIP = 0.995  # |r| for the Fisher transform (atanh(1) is infinite)
# c of a rank correlation's variance c (1 - rho^2) / n near +-1 on coarse scales, where r falls
# short of +-1 by a few misranked rows (``misranked_bounds``, the module doc)
MISRANKED_VARIANCE = 0.75
Method = Literal["clopper-pearson", "clopper-pearson-clustered"]
KappaMethod = Literal["clopper-pearson+bc-bootstrap", "clopper-pearson-clustered+bc-bootstrap"]


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


def bias_corrected_bounds(value: float, replicates: np.ndarray) -> tuple[float, float]:
    """Efron's bias-corrected percentile interval of ``value`` from its bootstrap
    ``replicates`` (the module doc): their quantiles at Phi(2 z0 -+ z), z0 = Phi^-1 of the share
    below ``value`` (ties half, the share kept within half a replicate of 0 and 1 so that z0 is
    finite). ``value`` twice without replicates."""
    defined = replicates[~np.isnan(replicates)]
    if len(defined) == 0:
        return value, value
    ties = np.isclose(defined, value, rtol=0.0, atol=1e-12)  # the resample that is the data
    share = (np.sum((defined < value) & ~ties) + np.sum(ties) / 2) / len(defined)
    half = 0.5 / len(defined)
    z0 = float(norm.ppf(np.clip(share, half, 1 - half)))
    z = float(norm.ppf(1 - (1 - CONFIDENCE) / 2))
    low, high = np.quantile(defined, norm.cdf([2 * z0 - z, 2 * z0 + z]))
    return float(low), float(high)


def _one_side_one_class(kappa: float, replicates: np.ndarray) -> bool:
    """Whether one side's labels are all one class, as kappa and its resamples show it: kappa is
    then 0 whatever the other side says (p_o = p_e), and so is every resample's, but for those
    whose two sides are one same class (1 by convention). Exact: both are ratios of counts."""
    return kappa == 0.0 and len(replicates) > 0 and bool(np.all((replicates == 0.0) | (replicates == 1.0)))


def _kappa_method(clusters: int | None) -> KappaMethod:
    return "clopper-pearson+bc-bootstrap" if clusters is None else "clopper-pearson-clustered+bc-bootstrap"


def kappa_interval(
    kappa: float, observed: float, chance: float, n: int, replicates: np.ndarray, clusters: int | None
) -> AgreementInterval:
    """Cohen's kappa of ``n`` rows with its interval (the module doc), given the observed and
    chance agreement it came from, the bootstrap's kappa ``replicates`` and the ``clusters``:
    the hull of p_o's exact interval mapped at ``chance`` and the bias-corrected bootstrap
    interval; [-1, 1] where nothing bounds kappa (one side all one class, or ``chance`` 1)."""
    method = _kappa_method(clusters)
    if chance >= 1.0 or n == 0 or _one_side_one_class(kappa, replicates):
        return {"value": kappa, "ci95": [-1.0, 1.0], "method": method, "effective_n": float(n)}
    variance = _variance(replicates) * (1 - chance) ** 2  # kappa's spread on p_o's scale
    count = effective_n(n, variance, observed * (1 - observed) / n, clusters)
    low, high = observed_bounds(observed, count, clusters)

    def mapped(p: float) -> float:
        return (p - chance) / (1 - chance)

    resampled_low, resampled_high = bias_corrected_bounds(kappa, replicates)
    # The value itself always lies inside (min/max remove rounding at p_o = 0 or 1).
    return {
        "value": kappa,
        "ci95": [
            max(min(mapped(low), resampled_low, kappa), -1.0),
            min(max(mapped(high), resampled_high, kappa), 1.0),
        ],
        "method": method,
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
        quantile = float(t.ppf(1 - (1 - CONFIDENCE) / 2, units - 1))
        centre = float(np.arctanh(np.clip(value, -CORRELATION_CLIP, CORRELATION_CLIP)))
        low, high = float(np.tanh(centre - quantile * spread)), float(np.tanh(centre + quantile * spread))
        # No closer to +-1 than a perfect ranking of the units (not the rows) gets: a group's
        # responses move together, and a bootstrap of near-perfect groups sees no variation.
        perfect = float(np.tanh(np.arctanh(CORRELATION_CLIP) - quantile / np.sqrt(max(units - 3, 1))))
        # Nor narrower than a few misranked rows allow: Fisher's variance vanishes near +-1.
        misranked_low, misranked_high = misranked_bounds(value, rows, quantile)
        low, high = min(low, perfect, misranked_low), max(high, -perfect, misranked_high)
        out["ci95"] = [min(low, value), max(high, value)]
        out["method"] = "fisher-z"
    return out


def misranked_bounds(value: float, rows: int, quantile: float) -> tuple[float, float]:
    """The population correlations rho from which ``value`` lies within ``quantile`` standard
    deviations when r's variance is ``MISRANKED_VARIANCE`` (1 - rho^2) / ``rows``: the roots
    of (value - rho)^2 = a (1 - rho^2), a = quantile^2 MISRANKED_VARIANCE / rows, inverted as
    Wilson's score interval inverts a proportion's (the module doc). A perfect ranking gets
    (1 - a) / (1 + a) to 1, never a point."""
    a = quantile**2 * MISRANKED_VARIANCE / max(rows, 1)
    root = float(np.sqrt(max(a * (1 + a - value**2), 0.0)))
    return (value - root) / (1 + a), (value + root) / (1 + a)


def zou_difference(
    a: float,
    b: float,
    interval_a: Sequence[float],
    interval_b: Sequence[float],
    replicates_a: np.ndarray,
    replicates_b: np.ndarray,
) -> list[float]:
    """The interval of b - a from each side's own interval (Zou 2007, MOVER) combined through
    the correlation c of the two sides' bootstrap replicates (resamples where either is NaN
    left out), within [-2, 2]:

        b - a - sqrt((b - l_b)^2 + (u_a - a)^2 - 2 c (b - l_b)(u_a - a)),
        b - a + sqrt((u_b - b)^2 + (a - l_a)^2 - 2 c (u_b - b)(a - l_a))."""
    (low_a, high_a), (low_b, high_b) = interval_a, interval_b
    both = ~(np.isnan(replicates_a) | np.isnan(replicates_b))
    spread = np.std(replicates_a[both]) * np.std(replicates_b[both]) if both.sum() > 1 else 0.0
    c = float(np.corrcoef(replicates_a[both], replicates_b[both])[0, 1]) if spread > 0 else 0.0

    def arm(of_b: float, of_a: float) -> float:
        """One side of the difference's interval from the two sides' arms facing it."""
        return float(np.sqrt(max(of_b**2 + of_a**2 - 2 * c * of_b * of_a, 0.0)))

    below, above = arm(b - low_b, high_a - a), arm(high_b - b, a - low_a)
    return [max(b - a - below, -2.0), min(b - a + above, 2.0)]


def correlation_difference_interval(
    a: float, b: float, replicates_a: np.ndarray, replicates_b: np.ndarray, units: int, rows: int
) -> CorrelationInterval:
    """The difference b - a of two rank correlations on the same items (two runs, or a run's
    blind vote and final decision) with Zou's interval (Zou 2007, "Toward using confidence
    intervals to compare correlations"): each side's own interval (``correlation_interval``)
    combined through the correlation of the two sides' bootstrap replicates (``zou_difference``).
    It inherits each side's t quantile and width floor, so two runs that agree on every item
    still get a width. No interval (with the reason) where a side has none."""
    out, _ = counted(b - a, replicates_b - replicates_a)
    first = correlation_interval(a, replicates_a, units, rows)
    second = correlation_interval(b, replicates_b, units, rows)
    if first["ci95"] is None or second["ci95"] is None:
        out["reason"] = first.get("reason") or second.get("reason") or "no interval for a side"
        return out
    out["ci95"] = zou_difference(a, b, first["ci95"], second["ci95"], replicates_a, replicates_b)
    out["method"] = "zou-fisher-z"
    return out
