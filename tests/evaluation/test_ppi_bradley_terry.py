"""The PPI++ Bradley-Terry (logistic) fit against ppi-python's numbers and limiting cases."""

import numpy as np
import pytest

from chateval.evaluation.systems.ppi_bradley_terry import (
    _fit,
    _Rows,
    _stats,
    bradley_terry_design,
    classical_logistic,
    ppi_logistic,
    tuned_lambda,
)

# A fixed dataset: 4 systems (0 the anchor, its column dropped), 30 labelled comparisons with
# human outcomes in {0, 1} (ppi-python's initial fit, sklearn's LogisticRegression, takes class
# labels only) and soft panel predictions, and 50 unlabelled ones. Pairs are "ab": system a in
# position A against system b. What ppi-python 0.2.3 (numpy 2.4.6, scipy 1.17.1, scikit-learn
# 1.9.1) computed on it, in a scratch venv outside the repo:
#   python3 -m venv /tmp/ppienv && /tmp/ppienv/bin/pip install ppi-python==0.2.3
#   from ppi_py import ppi_logistic_pointestimate, ppi_logistic_ci
#   from ppi_py.ppi import _logistic_get_stats, _calc_lam_glm
#   X, X_U: rows e_a - e_b without column 0; Y, YHAT, YHAT_U: numpy arrays of the lists below
#   ppi_logistic_pointestimate(X, Y, YHAT, X_U, YHAT_U, lam=lam) for lam in (1.0, 0.5, 0.0)
#   ppi_logistic_ci(X, Y, YHAT, X_U, YHAT_U, alpha=alpha, lam=lam) for lam in (None, 1.0, 0.0)
#   lam: _calc_lam_glm(*_logistic_get_stats(p, X, Y, YHAT, X_U, YHAT_U, ones, ones), clip=True)
#     at p = the lam=1 point estimate (the point estimate's lam) and at p = the tuned point
#     estimate (the interval's lam), and ppi_logistic_pointestimate(..., lam=<the interval's lam>)
# (values printed with repr).
PAIRS = "03 31 23 12 03 20 10 32 10 23 02 20 01 32 03 20 30 13 31 21 32 23 30 01 01 21 23 23 30 12"
Y = "000100010011110110001011100001"
YHAT = [
    0.16, 0.63, 0.14, 0.9, 0.2, 0.39, 0.76, 0.93, 0.76, 0.12, 0.82, 0.34, 0.33, 0.93, 0.16,
    0.4, 0.9, 0.37, 0.76, 0.16, 0.95, 0.15, 0.86, 0.21, 0.31, 0.13, 0.08, 0.1, 0.91, 0.89,
]  # fmt: skip
PAIRS_U = (
    "03 01 13 10 02 32 13 12 12 10 01 03 02 20 02 23 01 03 20 01 13 01 13 03 32 "
    "12 13 01 10 32 10 23 02 01 12 23 13 13 21 02 32 13 12 21 01 01 31 32 01 13"
)
YHAT_U = [
    0.15, 0.24, 0.5, 0.77, 0.77, 0.93, 0.52, 0.93, 0.87, 0.77, 0.29, 0.29, 0.81, 0.36, 0.86,
    0.11, 0.26, 0.13, 0.37, 0.35, 0.38, 0.36, 0.51, 0.21, 0.95, 0.93, 0.46, 0.29, 0.81, 0.95,
    0.87, 0.1, 0.65, 0.35, 0.9, 0.1, 0.47, 0.45, 0.24, 0.7, 0.92, 0.42, 0.88, 0.25, 0.37,
    0.33, 0.8, 0.95, 0.4, 0.49,
]  # fmt: skip
POINT = {
    1.0: [-0.07642835461822875, -1.9518540059097214, 0.3230228492848468],
    0.5: [-0.11950832534702306, -1.7869484961372113, 0.6282668844475393],
    0.0: [-0.30991587669142556, -1.683349911937311, 0.8935343904416219],
}
LAM_POINT = 0.710727505013897  # tuned at the lam = 1 fit (ppi_logistic_pointestimate's lam)
LAM_CI = 0.6035352842210887  # tuned again at that fit (ppi_logistic_ci's lam)
POINT_AT_LAM_CI = [-0.10098462573421889, -1.8168607346370855, 0.5697013065635415]
CI = {
    (0.05, None): (
        [-1.4274437605041315, -3.799978823732096, -0.9706234912634479],
        [1.2254745090356938, 0.1662573544579251, 2.110026104390531],
    ),
    (0.05, 1.0): (
        [-1.5488564933163522, -3.9388311605391673, -1.2190890533929575],
        [1.3959997840798948, 0.03512314871972455, 1.865134751962651],
    ),
    (0.05, 0.0): (
        [-1.7656475942616467, -3.683007458758262, -0.5519308809535232],
        [1.1458158408787955, 0.31630763488364, 2.338999661836767],
    ),
    (0.1, None): (
        [-1.2141842232978517, -3.4811458986762007, -0.722980013284068],
        [1.0122149717473172, -0.15257557059797056, 1.862382626411151],
    ),
    (0.1, 1.0): (
        [-1.3121290019091376, -3.6193777998374608, -0.971158256231679],
        [1.1592722926726802, -0.28433021198198194, 1.6172039548013726],
    ),
    (0.1, 0.0): (
        [-1.5316044456656075, -3.361515426453737, -0.31953830530214533],
        [0.9117726922827563, -0.005184397420884945, 2.106607086185389],
    ),
}
# ppi-python optimises with L-BFGS-B, here Newton: the minima agree to about 1e-8.
TOL = 1e-6


def _design(pairs: str) -> np.ndarray:
    a = np.array([int(p[0]) for p in pairs.split()])
    b = np.array([int(p[1]) for p in pairs.split()])
    return bradley_terry_design(a, b, 4, anchor=0)


X, X_U = _design(PAIRS), _design(PAIRS_U)
YY = np.array([float(c) for c in Y])


def test_design_rows_are_differences_without_the_anchor() -> None:
    rows = bradley_terry_design(np.array([0, 2]), np.array([1, 0]), 3, anchor=0)
    assert rows.tolist() == [[-1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="two different"):
        bradley_terry_design(np.array([1]), np.array([1]), 3, anchor=0)


@pytest.mark.parametrize("lam", [1.0, 0.5, 0.0])
def test_point_estimate_matches_ppi_python(lam: float) -> None:
    fit = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, lam=lam)
    assert fit.theta == pytest.approx(POINT[lam], abs=TOL)
    assert fit.lam == lam


@pytest.mark.parametrize(("alpha", "lam"), list(CI))
def test_interval_matches_ppi_python(alpha: float, lam: float | None) -> None:
    # ppi-python's intervals are normal; the default t quantile is tested below.
    fit = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, alpha=alpha, lam=lam, quantile="normal")
    low, high = fit.intervals()
    assert low == pytest.approx(CI[alpha, lam][0], abs=TOL)
    assert high == pytest.approx(CI[alpha, lam][1], abs=TOL)
    if lam is None:
        # The interval's lam, and the estimate at its centre (see the module doc).
        assert fit.lam == pytest.approx(LAM_CI, abs=TOL)
        assert fit.theta == pytest.approx(POINT_AT_LAM_CI, abs=TOL)
        assert 0 < fit.lam < 1


def test_the_default_interval_is_small_sample_corrected() -> None:
    # The same fit as ppi-python's; its standard errors with the labelled middle scaled by
    # (n - 1) / (n - p) (HC1: 30 labelled comparisons, 3 coefficients) and the quantile t(n - p)
    # at 0.975: 2.0518 (scipy) where the normal one is 1.9600.
    normal = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, quantile="normal")
    fit = ppi_logistic(X, YY, YHAT, X_U, YHAT_U)
    assert fit.theta == pytest.approx(normal.theta) and fit.lam == pytest.approx(normal.lam)
    assert fit.q == pytest.approx(2.0518305164802846)
    unscaled = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, lam=fit.lam, quantile="normal")
    assert np.all(fit.se > unscaled.se) and np.all(fit.se < unscaled.se * np.sqrt(29 / 27) + 1e-12)
    low, high = fit.intervals()
    assert low == pytest.approx(fit.theta - 2.0518305164802846 * fit.se)
    assert high == pytest.approx(fit.theta + 2.0518305164802846 * fit.se)


def test_lambda_zero_middle_is_scaled_by_hc1_exactly() -> None:
    """With lam 0 the middle is the labelled gradients' alone: the t interval's variance is
    the normal one's times (n - 1) / (n - p)."""
    t_fit = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, lam=0.0)
    normal = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, lam=0.0, quantile="normal")
    assert t_fit.se == pytest.approx(normal.se * np.sqrt(29 / 27), rel=1e-12)


def test_first_tuning_step_matches_ppi_pythons_point_estimate_lam() -> None:
    yhat, yhat_u = np.array(YHAT), np.array(YHAT_U)
    rows = _Rows(
        np.array(X, dtype=float), np.array(YY, dtype=float), yhat, np.array(X_U, dtype=float), yhat_u
    )
    first = _fit(rows, 1.0)
    assert tuned_lambda(_stats(first, rows, use_unlabelled=True)) == pytest.approx(LAM_POINT, abs=TOL)


def test_lambda_zero_is_the_labelled_only_fit() -> None:
    fit = ppi_logistic(X, YY, YHAT, X_U, YHAT_U, lam=0.0)
    alone = classical_logistic(X, YY)
    assert fit.theta == pytest.approx(alone.theta, abs=1e-10)
    assert fit.se == pytest.approx(alone.se, abs=1e-10)
    # The unlabelled comparisons play no part at lam = 0.
    other = ppi_logistic(X, YY, YHAT, X_U[:5], np.zeros(5), lam=0.0)
    assert other.theta == pytest.approx(alone.theta, abs=1e-10)


def test_all_labelled_is_the_labelled_fit_and_ties_count_half() -> None:
    # Every comparison labelled: nothing left for the panel, lam is 0, the classical fit.
    x = np.vstack([X, X_U])
    y = np.concatenate([YY, np.full(len(X_U), 0.5)])  # ties: fractional targets
    fit = ppi_logistic(x, y, np.concatenate([YHAT, YHAT_U]), np.zeros((0, 3)), np.zeros(0))
    assert fit.lam == 0.0
    assert fit.theta == pytest.approx(classical_logistic(x, y).theta, abs=1e-10)
    assert np.all(np.isfinite(fit.se)) and np.all(fit.se > 0)


def test_a_perfect_panel_on_many_comparisons_gets_a_large_lambda() -> None:
    rng = np.random.default_rng(3)
    strengths = np.array([0.0, 0.8, -0.5])
    a = rng.integers(0, 3, 600)
    b = (a + rng.integers(1, 3, 600)) % 3
    p = 1 / (1 + np.exp(-(strengths[a] - strengths[b])))
    y = (rng.random(600) < p).astype(float)
    x = bradley_terry_design(a, b, 3, anchor=0)
    fit = ppi_logistic(x[:100], y[:100], y[:100], x[100:], y[100:])
    alone = classical_logistic(x[:100], y[:100])
    # Predictions equal to the truth: lam about 1 / (1 + n / N) = 0.83, up to the labelled
    # slice's sampling noise in the gradients' covariances.
    assert 0.6 < fit.lam <= 1.0
    assert np.all(fit.se < alone.se)  # more data, narrower intervals
    assert fit.theta == pytest.approx(strengths[1:], abs=0.3)


def test_a_system_that_always_wins_has_no_finite_rating() -> None:
    x = bradley_terry_design(np.array([1, 1, 1, 2]), np.array([0, 2, 0, 0]), 3, anchor=0)
    with pytest.raises(ValueError, match="unbounded"):
        classical_logistic(x, np.array([1.0, 1.0, 1.0, 1.0]))


def test_systems_that_never_meet_are_not_identified() -> None:
    x = bradley_terry_design(np.array([0, 0, 2, 2]), np.array([1, 1, 3, 3]), 4, anchor=0)
    with pytest.raises(ValueError, match="not identified"):
        classical_logistic(x, np.array([1.0, 0.0, 1.0, 0.0]))
    # At lam = 1 only the unlabelled comparisons' curvature counts: one of them cannot place 3 systems.
    full = bradley_terry_design(np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2]), 3, anchor=0)
    with pytest.raises(ValueError, match="left unlabelled do not connect"):
        ppi_logistic(full[:3], [1.0, 0.0, 0.5], [1.0, 0.0, 1.0], full[3:], [0.5], lam=1.0)


def test_tuning_starts_from_the_labelled_fit_when_lam_one_has_no_minimum() -> None:
    # Systems 0, 1, 2; the panel says 0 beats 1 where the humans say 1 beats 0, and the two
    # unlabelled comparisons alone cannot bound the lam = 1 loss.
    pairs = [(0, 1), (0, 2), (1, 2)] * 3 + [(0, 1)]
    x = bradley_terry_design(np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs]), 3, anchor=0)
    yhat = [1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    y = [0.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0]
    x_u = bradley_terry_design(np.array([0, 1]), np.array([2, 2]), 3, anchor=0)
    with pytest.raises(ValueError, match="unbounded"):
        ppi_logistic(x, y, yhat, x_u, [0.0, 0.5], lam=1.0)
    fit = ppi_logistic(x, y, yhat, x_u, [0.0, 0.5])
    assert 0.0 <= fit.lam < 1.0 and np.all(np.isfinite(fit.theta)) and np.all(np.isfinite(fit.se))


def test_with_a_prior_the_panels_rows_cancel_out() -> None:
    """A prior's tie rows sit in both slices; the panel's rows must still cancel in expectation
    (no tilt towards a biased panel). With the unlabelled slice an exact copy (x5) of the
    labelled rows they cancel exactly: any panel gives the same fit at a fixed lam."""
    x, y = np.array(X, dtype=float), np.array(YY, dtype=float)
    prior = np.eye(x.shape[1])  # one tie per system against the anchor
    ties = np.full(len(prior), 0.5)
    fits = []
    for panel in (np.array(YHAT, dtype=float), np.clip(np.array(YHAT, dtype=float) + 0.4, 0, 1)):
        fit = ppi_logistic(
            np.vstack([x, prior]),
            np.concatenate([y, ties]),
            np.concatenate([panel, ties]),
            np.vstack([np.tile(x, (5, 1)), prior]),
            np.concatenate([np.tile(panel, 5), ties]),
            lam=0.7,
            pseudo=len(prior),
        )
        fits.append(fit.theta)
    np.testing.assert_allclose(fits[0], fits[1], atol=1e-8)
