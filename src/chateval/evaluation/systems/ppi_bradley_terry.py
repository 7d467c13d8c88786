"""Prediction-powered inference for a Bradley-Terry fit: the panel's decisions on every
comparison, corrected by a human-labelled slice (PPI++, Angelopoulos, Duchi, Zrnic 2023), for
the logistic M-estimator behind a leaderboard.

The model. Each comparison of systems A and B has features x = e_A - e_B with the anchor's
column dropped (so the anchor's log-strength is 0) and no intercept; its outcome y in [0, 1] is
A's share of the win (ties count half, as Chatbot Arena does; the logistic loss takes
fractional targets), and P(A beats B) = sigmoid(x . theta). A rating is
``1000 + 400 log10(e) theta``, the scale of ``leaderboard``.

The estimate. With human outcomes y and panel predictions yhat on n labelled comparisons and
predictions yhat_u on N unlabelled ones, theta minimises

    lam * mean_u l(theta; x, yhat_u) + mean_l [ l(theta; x, y) - lam * l(theta; x, yhat) ]

(l the logistic loss), which is consistent for every lam: the labelled slice measures and
removes what the panel gets wrong. Its covariance is the PPI sandwich
``H^-1 (n / N * V_u + V_l) H^-1 / n`` with V_u the covariance of lam times the gradients at
the predictions on the unlabelled comparisons, V_l that of (gradient at y - lam * gradient at
yhat) on the labelled ones, and H the loss's Hessian averaged over all n + N comparisons (over
the labelled alone when lam = 0, which is the classical sandwich interval of the labelled fit).
Intervals are theta +- q se. The middle of the sandwich is estimated from the n labelled
gradients, which with few labels and p coefficients understates it, so by default
(``quantile="t"``) the labelled term is scaled by (n - 1) / (n - p) (the HC1 correction of a
regression sandwich with p coefficients) and q is the Student t quantile with n - p degrees of
freedom (n counts real labels, not a prior's rows). With 10 labels, 4 systems and a panel
partial to one of them, the intervals with n - 1 degrees of freedom and no scaling held 93.4%
of planted ratings, these 95.6% (``scripts/simulate_intervals.py``, family
``calibrated-rating``; docs/performance.md).
ppi-python's normal quantile and unscaled middle, ``quantile="normal"``, which its tests use,
cover less than they claim with few labels.

lam is tuned as ppi-python's ``_calc_lam_glm`` (``optim_mode="overall"``, clipped to [0, 1]):
the trace of H^-1 Cov(g, ghat) H^-1 over twice (1 + n / N) that of H^-1 Var(ghat) H^-1, with
the covariance of the gradients on the labelled comparisons (divided by n) and the variance of
the gradients at the predictions on all n + N (``np.cov``, divided by n + N - 1).

The formulas and conventions are those of ``ppi-python`` 0.2.3 (``ppi_logistic_pointestimate``,
``ppi_logistic_ci``, ``_logistic_get_stats``, ``_calc_lam_glm``), transcribed rather than
imported (see ``ppi``); the tests hold this module to numbers it produced. One deviation in the
tuning: ppi-python's point estimate tunes lam at the lam = 1 fit, while its interval tunes lam
again at that tuned fit and is centred on the refit with the second lam; here the estimate is
that centre (the interval's lam is used throughout), so estimate and interval agree. Where the
lam = 1 loss has no finite minimum (a few unlabelled comparisons that one system wins all of),
the first tuning step starts from the labelled-only fit instead. With no unlabelled comparisons
lam is 0 (ppi-python divides by N = 0). The optimiser is Newton's
method on the convex loss (its Hessian, lam H_u + (1 - lam) H_l, is positive definite once the
comparisons connect every system to the anchor) rather than L-BFGS-B: the same minimum.

The labelled comparisons must be a uniformly random subset of all comparisons.
"""

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import expit

from chateval.evaluation.systems.ppi import critical_value
from chateval.schema.calibrated import Quantile

MAX_ABS_THETA = 20.0  # log-strength: 3,474 rating points; beyond it a system's record is all wins or losses
_GRADIENT_TOL = 1e-12
_MAX_NEWTON_STEPS = 200


@dataclass(frozen=True)
class LogisticFit:
    """A (PPI++) logistic fit: coefficients, their standard errors, the lam used, n labelled and N
    unlabelled rows (a prior's pseudo-rows included, as the fit used them), and the quantile
    ``q`` of the (1 - alpha) intervals with its ``degrees_of_freedom`` (None: normal)."""

    theta: np.ndarray
    se: np.ndarray
    lam: float
    n: int
    N: int
    q: float
    degrees_of_freedom: int | None

    def intervals(self) -> tuple[np.ndarray, np.ndarray]:
        """The coefficients' (1 - alpha) intervals: lower and upper bounds."""
        return self.theta - self.q * self.se, self.theta + self.q * self.se


def bradley_terry_design(a: np.ndarray, b: np.ndarray, n_systems: int, anchor: int) -> np.ndarray:
    """Rows x = e_a - e_b (systems as positions 0 .. n_systems - 1), the anchor's column dropped."""
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    if np.any(a == b):
        raise ValueError("a comparison needs two different systems")
    rows = np.zeros((len(a), n_systems))
    rows[np.arange(len(a)), a] += 1.0
    rows[np.arange(len(b)), b] -= 1.0
    return np.delete(rows, anchor, axis=1)


def _log1pexp(t: np.ndarray) -> np.ndarray:
    return np.asarray(np.logaddexp(0.0, t))


@dataclass(frozen=True)
class _Rows:
    """The fit's data: labelled rows ``x`` with human targets ``y`` and panel predictions
    ``yhat``, unlabelled rows ``x_u`` with predictions ``yhat_u``; the last ``pseudo`` rows of
    each slice are a prior's (``ppi_logistic``)."""

    x: np.ndarray
    y: np.ndarray
    yhat: np.ndarray
    x_u: np.ndarray
    yhat_u: np.ndarray
    pseudo: int = 0

    def unlabelled_weights(self, lam: float) -> np.ndarray:
        """Each unlabelled row's weight in the loss: lam / N, except with a prior. Its rows sit
        in both slices (so that it holds at every lam), which puts the labelled slice's panel
        rows at 1 / (n + m) each (m prior rows) against 1 / (N + m) in the unlabelled one: the
        panel's own fit would keep a net weight of about lam m / (n + m), tilting the ratings
        towards a biased panel. So the unlabelled panel rows take lam n_r / ((n_r + m) N_r) each
        (n_r, N_r the real rows), which cancels the labelled ones' in expectation, and the prior
        rows keep lam / (N + m): the prior as strong as before, the tilt gone."""
        big_n, m = len(self.yhat_u), self.pseudo
        weights = np.full(big_n, lam / big_n if big_n else 0.0)
        if m and big_n > m:
            real_n = len(self.y) - m
            weights[: big_n - m] = lam * real_n / (len(self.y) * (big_n - m))
        return weights


def _loss(theta: np.ndarray, rows: _Rows, lam: float) -> float:
    """The rectified loss of the module doc."""
    eta, eta_u = rows.x @ theta, rows.x_u @ theta
    labelled = np.mean(_log1pexp(eta) - rows.y * eta) - lam * np.mean(_log1pexp(eta) - rows.yhat * eta)
    unlabelled = np.sum(rows.unlabelled_weights(lam) * (_log1pexp(eta_u) - rows.yhat_u * eta_u))
    return float(labelled + unlabelled)


def _fit(rows: _Rows, lam: float) -> np.ndarray:
    """Minimise the rectified loss by damped Newton steps; ValueError when it has no finite
    minimum (a system that only wins or only loses) or the systems are not connected."""
    x, x_u = rows.x, rows.x_u
    n, big_n = len(rows.y), len(rows.yhat_u)
    theta = np.zeros(x.shape[1])
    for _ in range(_MAX_NEWTON_STEPS):
        mu, mu_u = expit(x @ theta), expit(x_u @ theta)
        gradient = x.T @ (mu - rows.y) / n - lam * x.T @ (mu - rows.yhat) / n
        hessian = (1 - lam) * (x.T * (mu * (1 - mu))) @ x / n
        if big_n:
            weights = rows.unlabelled_weights(lam)
            gradient += x_u.T @ (weights * (mu_u - rows.yhat_u))
            hessian += (x_u.T * (weights * mu_u * (1 - mu_u))) @ x_u
        if np.max(np.abs(gradient)) < _GRADIENT_TOL:
            break
        try:
            step = np.linalg.solve(hessian, gradient)
        except np.linalg.LinAlgError:
            # At lam = 1 the curvature is the unlabelled comparisons' alone: they must connect the systems.
            raise ValueError(
                "the ratings are not identified: the comparisons"
                + (" left unlabelled" if lam == 1 else "")
                + " do not connect every system to the anchor"
            ) from None
        # Halve the step until the loss does not rise: Newton's full step can overshoot far from the minimum.
        current, size = _loss(theta, rows, lam), 1.0
        while size > 1e-10 and _loss(theta - size * step, rows, lam) > current:
            size /= 2
        theta = theta - size * step
        if np.max(np.abs(theta)) > MAX_ABS_THETA:
            raise ValueError("a system won or lost every comparison: its rating is unbounded")
    return theta


@dataclass(frozen=True)
class _Stats:
    grads: np.ndarray  # labelled rows: x (mu - y)
    grads_hat: np.ndarray  # labelled rows: x (mu - yhat)
    grads_hat_u: np.ndarray  # unlabelled rows: x (mu - yhat_u)
    inv_hessian: np.ndarray


def _stats(theta: np.ndarray, rows: _Rows, use_unlabelled: bool) -> _Stats:
    """ppi-python's ``_logistic_get_stats``: the gradients and the inverse Hessian, averaged over
    all n + N rows (or the labelled n alone)."""
    x, x_u = rows.x, rows.x_u
    mu, mu_u = expit(x @ theta), expit(x_u @ theta)
    hessian = (x.T * (mu * (1 - mu))) @ x
    if use_unlabelled:
        hessian = (hessian + (x_u.T * (mu_u * (1 - mu_u))) @ x_u) / (len(rows.y) + len(rows.yhat_u))
    else:
        hessian = hessian / len(rows.y)
    try:
        inv_hessian = np.linalg.inv(hessian)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the ratings are not identified: the comparisons do not connect every system"
        ) from None
    return _Stats(
        grads=x * (mu - rows.y)[:, None],
        grads_hat=x * (mu - rows.yhat)[:, None],
        grads_hat_u=x_u * (mu_u - rows.yhat_u)[:, None],
        inv_hessian=inv_hessian,
    )


def _cov(rows: np.ndarray) -> np.ndarray:
    """The covariance of the rows' columns, divided by rows - 1 (``np.cov`` of the transpose)."""
    centred = rows - rows.mean(axis=0)
    return np.asarray(centred.T @ centred / (len(rows) - 1))


def tuned_lambda(stats: _Stats) -> float:
    """PPI++'s lam minimising the trace of the estimate's covariance, clipped to [0, 1] (0 when
    the predictions' gradients do not vary: constant predictions carry nothing)."""
    n, big_n = len(stats.grads), len(stats.grads_hat_u)
    if big_n == 0:
        return 0.0
    grads = stats.grads - stats.grads.mean(axis=0)
    grads_hat = stats.grads_hat - stats.grads_hat.mean(axis=0)
    covariance = (grads.T @ grads_hat + grads_hat.T @ grads) / n
    variance = _cov(np.concatenate([stats.grads_hat, stats.grads_hat_u]))
    v = stats.inv_hessian
    denominator = 2 * (1 + n / big_n) * np.trace(v @ variance @ v)
    if denominator <= 0:
        return 0.0
    return float(np.clip(np.trace(v @ covariance @ v) / denominator, 0.0, 1.0))


def ppi_logistic(
    x: ArrayLike,
    y: ArrayLike,
    yhat: ArrayLike,
    x_u: ArrayLike,
    yhat_u: ArrayLike,
    alpha: float = 0.05,
    lam: float | None = None,
    quantile: Quantile = "t",
    pseudo: int = 0,
) -> LogisticFit:
    """The PPI++ logistic fit of the module doc with its standard errors. ``x``, ``y``,
    ``yhat``: the labelled rows, their human targets and the panel's predictions; ``x_u``,
    ``yhat_u``: the unlabelled rows and predictions. ``lam`` None tunes it; 1 is plain PPI, 0
    the classical fit of the labelled rows alone. ``quantile``: of the intervals, Student t with
    n - p degrees of freedom and the HC1-scaled middle, or ppi-python's ``"normal"``.
    ``pseudo``: how many of the last labelled rows are
    a prior's pseudo-observations (they enter the loss and the sandwich, not the degrees of
    freedom)."""
    rows = np.atleast_2d(np.asarray(x, dtype=float))
    rows_u = np.asarray(x_u, dtype=float).reshape(-1, rows.shape[1])
    target, pred, pred_u = (np.asarray(v, dtype=float).ravel() for v in (y, yhat, yhat_u))
    n, big_n = len(target), len(pred_u)
    if len(rows) != n or len(pred) != n or len(rows_u) != big_n:
        raise ValueError("rows, targets and predictions must have matching lengths")
    if n - pseudo < 2:
        raise ValueError(f"a PPI fit needs at least 2 labelled rows, got {n - pseudo}")
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie in (0, 1)")
    for values in (target, pred, pred_u):
        if not np.all((values >= 0) & (values <= 1)):
            raise ValueError("targets and predictions must lie in [0, 1]")
    if big_n == 0:
        lam = 0.0
    data = _Rows(rows, target, pred, rows_u, pred_u, pseudo)
    if lam is None:
        # As ppi_logistic_ci: tune at the lam = 1 fit, refit, tune again there (see the module doc).
        try:
            first = _fit(data, 1.0)
        except ValueError:
            # Few unlabelled comparisons can leave the lam = 1 loss without a minimum (ppi-python
            # hands L-BFGS-B the unbounded loss); the tuning needs only a consistent point to take
            # the gradients at: the labelled-only fit.
            first = _fit(data, 0.0)
        once = tuned_lambda(_stats(first, data, use_unlabelled=True))
        lam = tuned_lambda(_stats(_fit(data, once), data, use_unlabelled=True))
    theta = _fit(data, lam)
    stats = _stats(theta, data, use_unlabelled=lam != 0)
    real, coefficients = n - pseudo, rows.shape[1]
    small_sample = quantile == "t"  # HC1 scaling and n - p degrees of freedom (the module doc)
    scale = (real - 1) / max(real - coefficients, 1) if small_sample else 1.0
    middle = scale * _cov(stats.grads - lam * stats.grads_hat)
    degrees_of_freedom = max(real - (coefficients if small_sample else 1), 1)
    if lam != 0:
        middle = middle + n / big_n * _cov(lam * stats.grads_hat_u)
    sigma = stats.inv_hessian @ middle @ stats.inv_hessian
    return LogisticFit(
        theta=theta,
        se=np.sqrt(np.clip(np.diag(sigma), 0.0, None) / n),
        lam=float(lam),
        n=n,
        N=big_n,
        q=critical_value(alpha, degrees_of_freedom, quantile),
        degrees_of_freedom=degrees_of_freedom if small_sample else None,
    )


def classical_logistic(
    x: ArrayLike, y: ArrayLike, alpha: float = 0.05, quantile: Quantile = "t", pseudo: int = 0
) -> LogisticFit:
    """The logistic fit of ``y`` alone with its sandwich intervals (lam = 0): the labelled-only
    estimate, or, given the panel's predictions on every comparison, the panel-only one
    (``pseudo``: as ``ppi_logistic``'s)."""
    empty = np.zeros((0, np.atleast_2d(x).shape[1]))
    return ppi_logistic(x, y, y, empty, np.zeros(0), alpha=alpha, lam=0.0, quantile=quantile, pseudo=pseudo)
