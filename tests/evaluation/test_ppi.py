"""Prediction-powered estimates of a mean against ppi-python's numbers and hand-computed cases."""

import math

import numpy as np
import pytest

from chateval.evaluation.ppi import ppi_mean, tuned_lambda

# A fixed dataset (human values in {0, 0.5, 1}, panel predictions in [0, 1]) and what ppi-python
# 0.2.3 (numpy 2.4.6) computed on it, in a scratch venv outside the repo:
#   python3 -m venv /tmp/ppienv && /tmp/ppienv/bin/pip install ppi-python==0.2.3
#   from ppi_py import ppi_mean_pointestimate, ppi_mean_ci, classical_mean_ci
#   ppi_mean_pointestimate(Y, YHAT, YHAT_U); ppi_mean_ci(Y, YHAT, YHAT_U, alpha=a) (lam=None)
#   ppi_mean_ci(Y, YHAT, YHAT_U, alpha=a, lam=1); classical_mean_ci(Y, alpha=a)
#   lam: ppi_py.ppi._calc_lam_glm on the lam=1 point estimate's gradients, clip=True
# (numpy arrays of the lists below; the values were printed with repr).
Y = [0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 1.0, 1.0]
YHAT = [0.0, 0.05, 0.51, 0.03, 0.05, 0.08, 0.58, 0.61, 0.34, 0.38, 1.0, 0.86]
YHAT_U = [
    0.6, 0.0, 0.04, 1.0, 1.0, 0.68, 0.53, 0.72, 0.0, 0.39, 0.43, 1.0, 0.25, 0.66, 0.77,
    0.87, 0.42, 0.34, 0.0, 0.89, 0.9, 0.4, 0.62, 0.13, 0.49, 0.77, 0.4, 0.57, 0.88, 0.73,
]  # fmt: skip
REFERENCE = {
    "estimate": 0.45366561199037386,
    "lam": 0.6869587744455214,
    0.05: {
        "ci": [0.3082066130412168, 0.599124610939531],
        "ci_lam1": [0.34979051759238544, 0.6672094824076147],
        "classical_ci": [0.12247478135305659, 0.5441918853136101],
    },
    0.1: {
        "ci": [0.3315925719337739, 0.5757386520469738],
        "ci_lam1": [0.3753068036816415, 0.6416931963183586],
        "classical_ci": [0.15637525821855774, 0.5102914084481089],
    },
}


@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_matches_ppi_python(alpha: float) -> None:
    out = ppi_mean(Y, YHAT, YHAT_U, alpha=alpha)
    expected = REFERENCE[alpha]
    assert isinstance(expected, dict)
    assert out["estimate"] == pytest.approx(REFERENCE["estimate"], abs=1e-12)
    assert out["lam"] == pytest.approx(REFERENCE["lam"], abs=1e-12)
    assert out["ci"] == pytest.approx(expected["ci"], abs=1e-12)
    assert out["classical_ci"] == pytest.approx(expected["classical_ci"], abs=1e-12)
    assert ppi_mean(Y, YHAT, YHAT_U, alpha=alpha, lam=1.0)["ci"] == pytest.approx(
        expected["ci_lam1"], abs=1e-12
    )
    assert tuned_lambda(Y, YHAT, YHAT_U) == pytest.approx(REFERENCE["lam"], abs=1e-12)
    assert out["classical"] == pytest.approx(np.mean(Y))
    assert out["naive"] == pytest.approx(np.mean(YHAT + YHAT_U))
    assert (out["n"], out["N"], out["alpha"]) == (12, 30, alpha)
    # The gain is the squared ratio of the widths; the effective n that times n.
    ratio = (expected["classical_ci"][1] - expected["classical_ci"][0]) / (
        expected["ci"][1] - expected["ci"][0]
    )
    assert out["gain"] == pytest.approx(ratio**2)
    assert out["effective_n"] == pytest.approx(ratio**2 * 12)
    assert out["gain"] is not None and out["gain"] > 1  # an informative panel narrows the interval


def test_lambda_zero_is_the_classical_estimate() -> None:
    out = ppi_mean(Y, YHAT, YHAT_U, lam=0.0)
    assert out["estimate"] == pytest.approx(out["classical"])
    assert out["ci"] == pytest.approx(out["classical_ci"])
    assert out["gain"] == pytest.approx(1.0)
    assert out["effective_n"] == pytest.approx(12)


def test_hand_computed_case() -> None:
    # y = yhat = [0, 1] labelled, [0, 1] unlabelled (n = N = 2):
    # cov(y, yhat) = 1/4 (divided by n); var of the 4 predictions (ddof 1) = 1/3;
    # lam = (1/4) / ((1 + 2/2) * 1/3) = 3/8; estimate = 3/8 * 1/2 + mean(5/8 * y) = 1/2;
    # variance = (3/8)^2 * (1/4) / 2 + (5/8)^2 * (1/4) / 2 = 17/256.
    out = ppi_mean([0.0, 1.0], [0.0, 1.0], [0.0, 1.0], alpha=0.05)
    z = 1.959963984540054
    assert out["lam"] == pytest.approx(3 / 8)
    assert out["estimate"] == pytest.approx(0.5)
    half = z * math.sqrt(17 / 256)
    assert out["ci"] == pytest.approx([0.5 - half, 0.5 + half])
    assert out["classical_ci"] == pytest.approx([0.5 - z * 0.5 / math.sqrt(2), 0.5 + z * 0.5 / math.sqrt(2)])
    assert out["gain"] == pytest.approx((0.125) / (17 / 256))


def test_uninformative_or_constant_panel_gets_lambda_zero() -> None:
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 40).astype(float)
    # Predictions anti-correlated with the truth: the clip keeps lam at 0, never negative.
    assert tuned_lambda(y, 1 - y, rng.random(100)) == 0.0
    # Constant predictions: their variance is 0 and they carry nothing (ppi-python: 0/0).
    out = ppi_mean(y, np.full(40, 0.7), np.full(100, 0.7))
    assert out["lam"] == 0.0
    assert out["estimate"] == pytest.approx(y.mean())


def test_a_good_panel_on_many_items_gains_a_lot() -> None:
    rng = np.random.default_rng(1)
    truth = rng.random(3000)
    y_all = (rng.random(3000) < truth).astype(float)
    yhat_all = np.clip(truth + rng.normal(0, 0.05, 3000), 0, 1)
    out = ppi_mean(y_all[:100], yhat_all[:100], yhat_all[100:])
    assert 0.5 < out["lam"] <= 1.0
    # Y is a coin flip with the predicted probability: at best var(Y) / E[var(Y | Yhat)] = 1.5.
    assert out["gain"] is not None and out["gain"] > 1.3
    assert out["ci"][0] < out["estimate"] < out["ci"][1]


@pytest.mark.parametrize(
    ("y", "yhat", "yhat_u", "message"),
    [
        ([0.0, 1.0], [0.0], [0.5], "predictions on the labelled"),
        ([1.0], [1.0], [0.5], "at least 2 labelled"),
        ([0.0, 1.0], [0.0, 1.0], [], "at least 2 labelled and 1 unlabelled"),
        ([0.0, math.nan], [0.0, 1.0], [0.5], "finite"),
    ],
)
def test_bad_inputs(y: list[float], yhat: list[float], yhat_u: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ppi_mean(y, yhat, yhat_u)
