"""Cohen's kappa's interval (chateval.evaluation.agreement.intervals.kappa_interval): p_o's
exact interval mapped at the observed chance agreement p_e, joined with the bias-corrected
bootstrap interval of kappa, which carries p_e's own uncertainty; its coverage, from -0.5 to
0.9 and on a skewed label mix, is measured by scripts/simulate_intervals.py --only agreement
(docs/performance/intervals.json)."""

import numpy as np
import pytest
from scipy.stats import norm

from chateval.evaluation.agreement.intervals import bias_corrected_bounds, kappa_interval
from chateval.evaluation.agreement.metrics import chance_agreement, label_codes, pairwise_metrics
from chateval.evaluation.binomial import clopper_pearson

# 20 labels, most of them A, as a panel that never gives the human label sees them
HUMANS = ["A"] * 14 + ["B"] * 4 + ["tie"] * 2
NEVER_RIGHT = ["B"] * 10 + ["tie"] * 4 + ["A"] * 6


def mapped_exact(truth: list[str], predicted: list[str]) -> tuple[float, float]:
    """p_o's Clopper-Pearson interval over the rows, mapped through kappa's line at the
    observed p_e: the interval that took p_e as known."""
    codes_t, codes_p = label_codes(truth), label_codes(predicted)
    right, n = int(np.sum(codes_t == codes_p)), len(truth)
    chance = chance_agreement(codes_t, codes_p)
    low, high = clopper_pearson(right, n)
    return (low - chance) / (1 - chance), (high - chance) / (1 - chance)


def test_no_label_right_gets_a_lower_bound_below_the_estimate() -> None:
    """p_o = 0 has the exact lower bound 0, which p_e taken as known mapped onto the estimate
    itself (the issue's -0.389 [-0.389, 0.336]); p_e is estimated, and kappa could be lower."""
    kappa = pairwise_metrics(HUMANS, NEVER_RIGHT, seed=0)["kappa"]
    low, high = kappa["ci95"]
    assert mapped_exact(HUMANS, NEVER_RIGHT)[0] == pytest.approx(kappa["value"])
    assert kappa["value"] == pytest.approx(-0.4925, abs=1e-4)
    assert -1 < low < kappa["value"] - 0.1 and kappa["value"] < high < 0


def test_a_worse_than_chance_panel_reaches_below_the_exact_interval() -> None:
    """Two of 20 right where chance gives 7.6: the interval holds the exact one (it is never
    narrower) and reaches further down, where p_e's own uncertainty takes kappa."""
    predicted = ["A"] * 2 + NEVER_RIGHT[2:]
    kappa = pairwise_metrics(HUMANS, predicted, seed=0)["kappa"]
    low, high = kappa["ci95"]
    exact_low, exact_high = mapped_exact(HUMANS, predicted)
    assert kappa["value"] == pytest.approx(-0.4516, abs=1e-4)
    assert low < exact_low - 0.05 and high >= exact_high
    assert kappa["method"] == "clopper-pearson+bc-bootstrap"


def test_the_bias_correction_moves_the_quantiles_to_where_the_resamples_lie() -> None:
    """By hand: with half the replicates below the value (the middle one a tie, counted half),
    the plain 2.5% and 97.5% quantiles; with 1684 of 2001 below (z0 = 1.0), the quantiles at
    Phi(2 z0 -+ 1.96), both above the plain ones."""
    replicates = np.linspace(-1.0, 1.0, 2001)
    plain = np.quantile(replicates, [0.025, 0.975])
    assert bias_corrected_bounds(0.0, replicates) == pytest.approx(tuple(plain), abs=1e-9)
    value = float(replicates[1683] + 0.0005)  # 1684 replicates below it
    z0 = norm.ppf(1684 / 2001)
    assert z0 == pytest.approx(1.0, abs=0.01)
    expected = np.quantile(replicates, norm.cdf([2 * z0 - 1.959964, 2 * z0 + 1.959964]))
    found = bias_corrected_bounds(value, replicates)
    assert found == pytest.approx(tuple(expected), abs=1e-6)
    assert found[0] > plain[0] + 0.5 and found[1] > plain[1]
    assert bias_corrected_bounds(0.3, np.empty(0)) == (0.3, 0.3)


@pytest.mark.parametrize("seed", range(6))
def test_the_value_is_always_inside_and_the_exact_interval_too(seed: int) -> None:
    """Panels better and worse than chance, 5 to 60 labels, alone or in an item's two orders."""
    rng = np.random.default_rng(seed)
    n = int(rng.choice([5, 12, 30, 60]))
    truth = list(rng.choice(["A", "B", "tie"], size=n, p=[0.6, 0.3, 0.1]))
    other = {"A": "B", "B": "tie", "tie": "A"}
    keep = rng.random()  # how often the panel repeats the human label; else it contradicts it
    predicted = [x if rng.random() < keep else other[x] for x in truth]
    for groups in (None, [f"q{i}" for i in range(n // 2)] * 2 if n % 2 == 0 else None):
        kappa = pairwise_metrics(truth, predicted, seed=seed, groups=groups)["kappa"]
        low, high = kappa["ci95"]
        assert -1 <= low <= kappa["value"] <= high <= 1 and low < high
        if groups is None:
            exact_low, exact_high = mapped_exact(truth, predicted)
            assert low <= max(exact_low, -1) + 1e-12 and high >= min(exact_high, 1) - 1e-12


def test_nothing_bounds_kappa_when_a_side_is_one_class() -> None:
    """p_e = 1 (both sides one class): kappa by convention. One side one class: kappa is 0
    whatever the other side says, in the data and every resample. Both: [-1, 1]."""
    assert kappa_interval(1.0, 1.0, 1.0, 5, np.ones(100), None)["ci95"] == [-1.0, 1.0]
    assert pairwise_metrics(["A"] * 3, ["A"] * 3)["kappa"]["ci95"] == [-1.0, 1.0]
    humans_one_class = pairwise_metrics(["A"] * 10, ["A"] * 7 + ["B"] * 3)["kappa"]
    assert humans_one_class["value"] == 0.0 and humans_one_class["ci95"] == [-1.0, 1.0]
    panel_one_class = pairwise_metrics(["A", "B", "tie", "A", "B"], ["B"] * 5)["kappa"]
    assert panel_one_class["value"] == 0.0 and panel_one_class["ci95"] == [-1.0, 1.0]


def test_all_right_of_two_classes_keeps_its_exact_lower_bound() -> None:
    """5 of 5 right over A and B: every resample says 1, and the exact interval of p_o gives
    the width (never [1, 1])."""
    kappa = pairwise_metrics(["A", "B", "A", "B", "A"], ["A", "B", "A", "B", "A"])["kappa"]
    chance = (3 * 3 + 2 * 2) / 25
    exact_low = (clopper_pearson(5, 5)[0] - chance) / (1 - chance)
    assert kappa["value"] == 1.0 and kappa["ci95"] == pytest.approx([exact_low, 1.0])
