"""Prediction-powered inference for a mean: the panel's verdicts on every item, corrected by a
small human-labelled slice (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic 2023, "Prediction-
powered inference"), with the power tuning of PPI++ (Angelopoulos, Duchi, Zrnic 2023).

With human values Y and panel predictions Yhat on n labelled items, and predictions Yhat_u on
N unlabelled ones, the PPI++ estimate of the mean of Y is

    theta = lam * mean(Yhat_u) + mean(Y - lam * Yhat)

which is unbiased for every lam: the labelled slice measures (and removes) the panel's bias.
lam = 1 is plain PPI, lam = 0 the classical labelled-only mean; the power-tuned lam minimises
the estimate's variance,

    lam = cov(Y, Yhat) / ((1 + n / N) * var(Yhat on all n + N items)),  clipped to [0, 1],

so a panel that says nothing about Y (cov 0) gets lam = 0 and the interval is never wider than
the classical one by more than the noise of estimating lam. The (1 - alpha) interval is
theta +- q * sqrt(lam^2 var(Yhat_u) / N + var(Y - lam Yhat) / n), and the classical one
mean(Y) +- q * sd(Y) / sqrt(n), with q the Student t quantile with n - 1 degrees of freedom:
the variance of the labelled part is estimated from the n labels, and with a handful of them
the normal quantile's interval covers far less often than it claims (3 labels: t(2) is 4.30
where z is 1.96).

Few labels. Under ``FEW_LABELS`` (10) labels lam is 0: its tuning from 3 labels is noise (a
lam near 1 from three agreeing labels made a 95% interval cover 85% of the time in
``scripts/simulate_intervals.py``), so the estimate is the labelled items' own mean, and a
warning says so.

Tuned lam. lam is tuned to make the estimate's variance small on the same n labels that then
estimate the rectifier's variance var(Y - lam Yhat), which understates it when n is small: a
run of labels that happen to agree with the panel raises both lam and the apparent fit. So the
rectifier's variance is at least that of the held-out residuals Y_i - lam_(-i) Yhat_i, each
lam_(-i) tuned without item i (``held_out_lambdas``; like the PRESS residuals of a regression).
With about 12 labels per system and a panel that abstained on about 30% of the comparisons
(``scripts/simulate_intervals.py``, family ``calibrated-field``, 10% of 240 labelled), the
field win rates held 93.6% of the truths without it, 94.8% with it (25% labelled: 95.4% and
95.8%); the per-pair intervals with 10 labels widened from 0.448 to 0.463 on average (a panel
copying the humans 80% of the time; 0.634 to 0.646 for one that never does), and by less than
0.001 with 30.

Outcomes known to lie in bounds (a win rate: [0, 1]; ``bounds``) get two more guards, so that
a handful of labels that happen to agree cannot make the interval narrow:

- the rectifier's variance var(Y - lam Yhat) is at least (1 - lam)^2 p (1 - p) (on the bounds'
  scale, p the estimate's share): the Bernoulli bound of the part of Y the panel is not used to
  predict (with lam 0, the largest variance a win rate with mean p can have);
- the interval holds the Wilson score interval (same q) of the estimate from n + lam N items
  (no estimator can be surer than one with every item labelled; with lam 0 the panel adds
  nothing, so n), the classical one that from its n, and both are clipped to the bounds (the
  PPI estimate itself can leave them: its correction is unbounded).

With both, the simulation's per-pair intervals (40 comparisons, 3 to 30 labelled, a panel that
agrees with the humans 80% of the time or not at all) held the true win rate 97.5% to 100% of
the time.

The formulas are those of the ``ppi-python`` package (0.2.3: ``ppi_mean_pointestimate`` and
``ppi_mean_ci`` with ``lam=None``, whose tuning is ``_calc_lam_glm`` with the identity Hessian,
and ``classical_mean_ci``), transcribed rather than imported (it pulls numba, pandas,
statsmodels and gdown); the tests hold this module to numbers it produced. Its variance
conventions are kept: the covariance in lam's numerator and the variances of the interval
divide by n (or N), the variance in lam's denominator by n + N - 1 (``np.cov``). One
deviation: when the predictions are all equal (their variance is 0) ppi-python's lam is 0/0;
here it is 0, since constant predictions carry no information. ``quantile="normal"`` gives
ppi-python's estimator as it is (z quantile, lam tuned from any number of labels; its tests
use it); the default is the t quantile, the few-labels rule and the held-out floor above.

The labelled items must be a uniformly random subset of all items for the estimate to be
unbiased (the labelled and unlabelled items are draws from the same distribution).
"""

import math
from collections.abc import Sequence

import numpy as np
from scipy.stats import norm, t

from chateval.evaluation.systems.proportion_interval import wilson
from chateval.schema.calibrated import PPIMean, Quantile

# Below this many labels lam is not tuned (0: the labelled items alone) and the estimate carries
# a warning (see the module doc).
FEW_LABELS = 10


def critical_value(alpha: float, df: int, quantile: Quantile) -> float:
    """The two-sided (1 - alpha) quantile: Student t with ``df`` degrees of freedom, or normal."""
    upper = 1 - alpha / 2
    return float(t.ppf(upper, df) if quantile == "t" else norm.ppf(upper))


def _vector(values: Sequence[float] | np.ndarray, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=float).ravel()
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite numbers")
    return array


def tuned_lambda(
    y: Sequence[float] | np.ndarray,
    yhat_labelled: Sequence[float] | np.ndarray,
    yhat_unlabelled: Sequence[float] | np.ndarray,
) -> float:
    """PPI++'s variance-minimising lam for a mean, clipped to [0, 1] (see the module doc)."""
    y_, yl, yu = (
        _vector(y, "y"),
        _vector(yhat_labelled, "yhat_labelled"),
        _vector(yhat_unlabelled, "yhat_unlabelled"),
    )
    n, big_n = len(y_), len(yu)
    covariance = float(np.mean((y_ - y_.mean()) * (yl - yl.mean())))
    variance = float(np.var(np.concatenate([yl, yu]), ddof=1))
    if variance == 0.0:
        return 0.0
    return float(np.clip(covariance / ((1 + n / big_n) * variance), 0.0, 1.0))


def held_out_lambdas(y: np.ndarray, yhat_labelled: np.ndarray, yhat_unlabelled: np.ndarray) -> np.ndarray:
    """``tuned_lambda`` with each labelled item left out in turn (item i's: tuned on the other
    n - 1 labels and every unlabelled item), from the sums that tuning reads."""
    n, big_n = len(y), len(yhat_unlabelled)
    m = n - 1
    s_y, s_x, s_xy = y.sum(), yhat_labelled.sum(), (y * yhat_labelled).sum()
    covariance = (s_xy - y * yhat_labelled) / m - ((s_y - y) / m) * ((s_x - yhat_labelled) / m)
    total = m + big_n
    s_all = s_x + yhat_unlabelled.sum() - yhat_labelled
    s_all2 = (yhat_labelled**2).sum() + (yhat_unlabelled**2).sum() - yhat_labelled**2
    variance = (s_all2 - s_all**2 / total) / (total - 1)
    safe = np.where(variance > 0, variance, 1.0)
    return np.where(variance > 0, np.clip(covariance / ((1 + m / big_n) * safe), 0.0, 1.0), 0.0)


def ppi_mean(
    y: Sequence[float] | np.ndarray,
    yhat_labelled: Sequence[float] | np.ndarray,
    yhat_unlabelled: Sequence[float] | np.ndarray,
    alpha: float = 0.05,
    lam: float | None = None,
    bounds: tuple[float, float] | None = None,
    quantile: Quantile = "t",
) -> PPIMean:
    """The PPI++ estimate of the mean of ``y`` with its (1 - alpha) interval, the classical
    (labelled-only) estimate and interval, and the panel's uncorrected mean.

    ``y`` and ``yhat_labelled`` are the human values and the panel's predictions on the same n
    labelled items, ``yhat_unlabelled`` the panel's predictions on the N others. ``lam`` None
    tunes it (PPI++); 1 is plain PPI, 0 the classical estimate. ``bounds``: the range every
    value lies in, which widens and clips the intervals (see the module doc); ``quantile``:
    Student t with n - 1 degrees of freedom and lam 0 under ``FEW_LABELS`` labels, or
    ``"normal"``: ppi-python's estimator as it is (z, lam tuned from any number of labels).
    """
    y_, yl, yu = (
        _vector(y, "y"),
        _vector(yhat_labelled, "yhat_labelled"),
        _vector(yhat_unlabelled, "yhat_unlabelled"),
    )
    n, big_n = len(y_), len(yu)
    if len(yl) != n:
        raise ValueError(f"{n} human values but {len(yl)} predictions on the labelled items")
    if n < 2 or big_n < 1:
        raise ValueError(f"PPI needs at least 2 labelled and 1 unlabelled item, got n={n}, N={big_n}")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    if bounds is not None and not bounds[0] < bounds[1]:
        raise ValueError(f"bounds must be (low, high) with low < high, got {bounds}")
    if bounds is not None and not all(np.all((v >= bounds[0]) & (v <= bounds[1])) for v in (y_, yl, yu)):
        raise ValueError(f"values and predictions must lie in {list(bounds)}")
    # Fewer than FEW_LABELS labels cannot estimate how far to trust the panel (lam's tuning
    # from 3 labels is noise, and its interval covered 85%): the labelled-only estimate.
    # (``quantile="normal"`` is ppi-python's estimator as it is, which tunes from any number.)
    tuned = tuned_lambda(y_, yl, yu) if n >= FEW_LABELS or quantile == "normal" else 0.0
    used = tuned if lam is None else float(lam)
    q = critical_value(alpha, n - 1, quantile)

    estimate = used * float(yu.mean()) + float(np.mean(y_ - used * yl))
    # The two halves are independent samples, so their variances add.
    rectifier = float(np.var(y_ - used * yl))
    if lam is None and tuned > 0 and quantile == "t":
        # lam was tuned to make this variance small on these very labels, so it understates the
        # rectifier's: at least that of the held-out residuals (the module doc).
        rectifier = max(rectifier, float(np.var(y_ - held_out_lambdas(y_, yl, yu) * yl)))
    classical = float(y_.mean())
    classical_variance = float(np.var(y_))
    if bounds is not None:
        # The part of the human variance the panel is not used to predict, at its largest (the
        # Bernoulli bound): a handful of labels that happen to agree must not make it 0. The
        # classical estimate is lam 0, and gets the same floor so that the two compare alike.
        rectifier = max(rectifier, (1 - used) ** 2 * _bernoulli_bound(estimate, bounds))
        classical_variance = max(classical_variance, _bernoulli_bound(classical, bounds))
    ppi_se = math.sqrt(used**2 * float(np.var(yu)) / big_n + rectifier / n)
    classical_se = math.sqrt(classical_variance / n)

    effective_n = gain = None
    if ppi_se > 0:
        gain = (classical_se / ppi_se) ** 2  # the widths' ratio: q cancels
        effective_n = gain * n
    ci = [estimate - q * ppi_se, estimate + q * ppi_se]
    classical_ci = [classical - q * classical_se, classical + q * classical_se]
    if bounds is not None:
        # At most every item's worth of information, and only the labelled items' when the
        # panel is not used (lam 0): the Wilson interval of that many.
        ci = _bounded(ci, estimate, n + used * big_n, q, bounds)
        classical_ci = _bounded(classical_ci, classical, n, q, bounds)
    out: PPIMean = {
        "estimate": estimate,
        "ci": ci,
        "lam": used,
        "classical": classical,
        "classical_ci": classical_ci,
        "naive": float(np.mean(np.concatenate([yl, yu]))),
        "n": n,
        "N": big_n,
        "alpha": alpha,
        "effective_n": effective_n,
        "gain": gain,
        "quantile": quantile,
    }
    if n < FEW_LABELS:
        out["warning"] = (
            f"few labels: {n} labelled items, fewer than {FEW_LABELS}: too few to tell how far "
            "to trust the panel, so the estimate is the labelled items' alone (lambda 0)"
        )
    return out


def _share(value: float, bounds: tuple[float, float]) -> float:
    """Where ``value`` lies between the bounds, 0 to 1 (clipped: an estimate can leave them)."""
    low, high = bounds
    return min(1.0, max(0.0, (value - low) / (high - low)))


def _bernoulli_bound(mean: float, bounds: tuple[float, float]) -> float:
    """The largest variance a value within ``bounds`` with this mean can have."""
    share = _share(mean, bounds)
    return share * (1 - share) * (bounds[1] - bounds[0]) ** 2


def _bounded(
    interval: list[float], estimate: float, items: float, q: float, bounds: tuple[float, float]
) -> list[float]:
    """``interval`` widened to hold the Wilson interval of ``estimate`` from ``items`` observations
    (on the scale of ``bounds``), clipped to the bounds: the two intervals' hull (both hold the
    estimate, or the Wilson one the bound nearer an estimate that left them)."""
    low, high = bounds
    w_low, w_high = wilson(np.array(_share(estimate, bounds)), np.array(float(items)), np.array(q))
    return [
        max(low, min(interval[0], low + (high - low) * float(w_low))),
        min(high, max(interval[1], low + (high - low) * float(w_high))),
    ]
