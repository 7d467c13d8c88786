"""Prediction-powered estimates of a mean against ppi-python's numbers (its normal quantile) and
hand-computed cases (the default t quantile, and the Wilson guard of bounded outcomes)."""

import math

import numpy as np
import pytest

from chateval.evaluation.systems.ppi import FEW_LABELS, held_out_lambdas, ppi_mean, tuned_lambda

T_2 = 4.302652729749462  # Student t with 2 degrees of freedom at 0.975 (scipy)

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
    out = ppi_mean(Y, YHAT, YHAT_U, alpha=alpha, quantile="normal")
    expected = REFERENCE[alpha]
    assert isinstance(expected, dict)
    assert out["estimate"] == pytest.approx(REFERENCE["estimate"], abs=1e-12)
    assert out["lam"] == pytest.approx(REFERENCE["lam"], abs=1e-12)
    assert out["ci"] == pytest.approx(expected["ci"], abs=1e-12)
    assert out["classical_ci"] == pytest.approx(expected["classical_ci"], abs=1e-12)
    assert ppi_mean(Y, YHAT, YHAT_U, alpha=alpha, lam=1.0, quantile="normal")["ci"] == pytest.approx(
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
    out = ppi_mean([0.0, 1.0], [0.0, 1.0], [0.0, 1.0], alpha=0.05, quantile="normal")
    z = 1.959963984540054
    assert out["lam"] == pytest.approx(3 / 8)
    assert out["estimate"] == pytest.approx(0.5)
    half = z * math.sqrt(17 / 256)
    assert out["ci"] == pytest.approx([0.5 - half, 0.5 + half])
    assert out["classical_ci"] == pytest.approx([0.5 - z * 0.5 / math.sqrt(2), 0.5 + z * 0.5 / math.sqrt(2)])
    assert out["gain"] == pytest.approx((0.125) / (17 / 256))


def test_held_out_lambdas_are_the_tuning_without_each_label() -> None:
    y, yhat, yhat_u = (np.array(v) for v in (Y, YHAT, YHAT_U))
    expected = [tuned_lambda(np.delete(y, i), np.delete(yhat, i), yhat_u) for i in range(len(y))]
    assert held_out_lambdas(y, yhat, yhat_u) == pytest.approx(expected, abs=1e-12)


def test_a_tuned_lambda_s_rectifier_variance_is_at_least_the_held_out_one() -> None:
    """The t interval with lam tuned: the rectifier's variance is the larger of the in-sample
    one at lam and that of the held-out residuals (here the larger: the floor binds)."""
    y, yhat, yhat_u = (np.array(v) for v in (Y, YHAT, YHAT_U))
    out = ppi_mean(Y, YHAT, YHAT_U)
    lam = out["lam"]
    assert lam == pytest.approx(REFERENCE["lam"])  # the t default tunes lam as ppi-python does
    in_sample = float(np.var(y - lam * yhat))
    held_out = float(np.var(y - held_out_lambdas(y, yhat, yhat_u) * yhat))
    assert held_out > in_sample
    q = 2.200985160091639  # Student t, 11 degrees of freedom, 0.975 (scipy)
    half = q * math.sqrt(lam**2 * float(np.var(yhat_u)) / len(YHAT_U) + held_out / len(Y))
    assert out["ci"] == pytest.approx([out["estimate"] - half, out["estimate"] + half])


def test_three_labels_get_a_t_interval_by_hand() -> None:
    # Plain PPI (lam 1): y - yhat = [0, 0, 1] on 3 labelled items, yhat_u = [1, 1, 0, 0]:
    # estimate = 1/2 + 1/3; variance = var(yhat_u) / 4 + var(y - yhat) / 3 = (1/4) / 4 + (2/9) / 3
    # (both divided by their counts, ppi-python's convention); the quantile t(2), not z = 1.96.
    out = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], lam=1.0)
    half = T_2 * math.sqrt(1 / 16 + 2 / 27)
    assert out["estimate"] == pytest.approx(5 / 6)
    assert out["ci"] == pytest.approx([5 / 6 - half, 5 / 6 + half])
    # The labelled-only mean 2/3 with sd sqrt(2/9) (ddof 0) over sqrt(3).
    classical_half = T_2 * math.sqrt(2 / 9) / math.sqrt(3)
    assert out["classical_ci"] == pytest.approx([2 / 3 - classical_half, 2 / 3 + classical_half])
    assert out["quantile"] == "t"
    # As a win rate in [0, 1], the same interval clipped to the bounds: 3 labels pin nothing down.
    bounded = ppi_mean([1.0, 0.0, 1.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0, 0.0], lam=1.0, bounds=(0.0, 1.0))
    assert bounded["ci"] == [0.0, 1.0]


def _wilson_low_at_one(n: int, q: float) -> float:
    """Wilson's lower bound for a proportion of 1 out of n, written out: centre
    (1 + q^2 / 2n) / (1 + q^2 / n), half-width q / (1 + q^2 / n) * sqrt(q^2 / 4n^2)."""
    centre = (1 + q**2 / (2 * n)) / (1 + q**2 / n)
    return centre - q / (1 + q**2 / n) * math.sqrt(q**2 / (4 * n**2))


def test_agreeing_labels_and_predictions_get_no_zero_width_interval() -> None:
    # 3 labels "A won", the panel saying so on them and on 5 more: every variance is 0, and
    # the normal interval was [1, 1]. Under 10 labels lam is 0 (the labelled items alone), and
    # bounded, the interval holds the Wilson interval of 1 from those 3 items.
    out = ppi_mean([1.0] * 3, [1.0] * 3, [1.0] * 5, bounds=(0.0, 1.0))
    assert out["estimate"] == 1.0 and out["lam"] == 0.0 and out["gain"] is None
    assert out["ci"] == pytest.approx([_wilson_low_at_one(3, T_2), 1.0])
    assert out["classical_ci"] == pytest.approx([_wilson_low_at_one(3, T_2), 1.0])
    assert out["ci"][1] - out["ci"][0] > 0.5
    # With the panel used fully (lam 1), at most every item's worth: the Wilson interval of 8.
    full = ppi_mean([1.0] * 3, [1.0] * 3, [1.0] * 5, bounds=(0.0, 1.0), lam=1.0)
    assert full["ci"] == pytest.approx([_wilson_low_at_one(8, T_2), 1.0])
    # Bounds other than [0, 1] scale the Wilson interval onto them.
    scaled = ppi_mean([5.0] * 3, [5.0] * 3, [5.0] * 5, bounds=(1.0, 5.0))
    assert scaled["ci"] == pytest.approx([1 + 4 * _wilson_low_at_one(3, T_2), 5.0])
    assert ppi_mean([1.0] * 3, [1.0] * 3, [1.0] * 5)["ci"] == [1.0, 1.0]  # unbounded: nothing to go by


def test_few_labels_carry_a_warning() -> None:
    few = ppi_mean(Y[:9], YHAT[:9], YHAT_U)
    assert few["warning"].startswith("few labels: 9 labelled items") and few["lam"] == 0.0
    assert "warning" not in ppi_mean(Y[:FEW_LABELS], YHAT[:FEW_LABELS], YHAT_U)


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
        ([0.0, 1.0], [0.0, 1.0], [1.5], r"must lie in \[0.0, 1.0\]"),
    ],
)
def test_bad_inputs(y: list[float], yhat: list[float], yhat_u: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ppi_mean(y, yhat, yhat_u, bounds=(0.0, 1.0))
    with pytest.raises(ValueError, match="low < high"):
        ppi_mean([0.0, 1.0], [0.0, 1.0], [0.5], bounds=(1.0, 1.0))
