"""Metrics against hand-computed cases, scikit-learn / scipy on random data, degenerate inputs."""

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score

from chateval.evaluation.agreement.correlations import correlation_or_nan, correlations, table_correlations
from chateval.evaluation.agreement.metrics import accuracy, cohen_kappa, direct_metrics, pairwise_metrics


def test_accuracy_and_kappa_by_hand() -> None:
    truth = ["A", "A", "B", "tie"]
    pred = ["A", "B", "B", "tie"]
    assert accuracy(truth, pred) == 0.75
    # p_o = 0.75; p_e = (2*1 + 1*2 + 1*1) / 16 = 5/16; kappa = (0.75 - 5/16) / (11/16) = 7/11
    assert cohen_kappa(truth, pred) == pytest.approx(7 / 11)


@pytest.mark.parametrize("seed", range(5))
def test_kappa_matches_sklearn_on_random_labels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    truth = list(rng.choice(["A", "B", "tie"], size=60))
    pred = list(rng.choice(["A", "B", "tie"], size=60, p=[0.5, 0.3, 0.2]))
    expected = cohen_kappa_score(truth, pred, labels=["A", "B", "tie"])
    assert cohen_kappa(truth, pred) == pytest.approx(expected)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("size", [2, 7, 50, 150])  # 150: past the all-pairs Kendall
def test_correlations_match_scipy_on_random_data(seed: int, size: int) -> None:
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, 4, size=size) / 3
    pred = rng.integers(1, 4, size=size).astype(float)
    smooth = rng.normal(size=size)  # no ties
    for t, p in ((truth, pred), (smooth, pred), (smooth, smooth + rng.normal(size=size))):
        if np.all(t == t[0]) or np.all(p == p[0]):
            continue
        out = correlations(list(t), list(p))
        assert out["spearman"] == pytest.approx(spearmanr(t, p).statistic, abs=1e-12)
        assert out["kendall"] == pytest.approx(kendalltau(t, p).statistic, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_resamples_tabled_by_score_match_one_by_one(seed: int) -> None:
    """Scale scores go through each resample's table of counts (any resample sizes, clusters
    of unequal size included); the values and the undefined resamples are the one-by-one ones."""
    rng = np.random.default_rng(seed)
    for size in (1, 2, 9, 150):
        truth = rng.integers(1, 4, size=size).astype(float)
        for pred in (rng.integers(1, 11, size=size).astype(float), np.full(size, 3.0)):
            samples = [rng.integers(0, size, int(rng.integers(0, size + 3))) for _ in range(30)]
            tabled = table_correlations(truth, pred, samples)
            one_by_one = np.asarray([correlation_or_nan(truth[i], pred[i]) for i in samples])
            assert tabled is not None
            np.testing.assert_array_equal(np.isnan(tabled), np.isnan(one_by_one))
            np.testing.assert_allclose(tabled, one_by_one, atol=1e-12)
    smooth = rng.normal(size=30)  # 900 value pairs: past the tables
    assert table_correlations(smooth, smooth, [np.arange(30)]) is None


def test_degenerate_cases_are_defined() -> None:
    assert accuracy([], []) == 0.0
    assert cohen_kappa([], []) == 0.0
    assert cohen_kappa(["A", "A"], ["A", "A"]) == 1.0
    assert cohen_kappa(["A", "B"], ["tie", "tie"]) == 0.0
    # A correlation of a constant side, or of fewer than 2 pairs, is undefined, not 0.
    assert correlations([1, 2, 3], [2, 2, 2]) == {"spearman": None, "kendall": None}
    assert correlations([1], [1]) == {"spearman": None, "kendall": None}
    empty = pairwise_metrics([], [])
    # Nothing labelled: nothing known (no zero-width interval where nothing is exact).
    assert empty["n"] == 0 and empty["accuracy"]["value"] == 0.0 and empty["accuracy"]["ci95"] == [0, 1]
    assert empty["kappa"]["ci95"] == [-1, 1]
    constant = pairwise_metrics(["A", "B", "tie", "A"], ["tie"] * 4)
    low, high = constant["kappa"]["ci95"]
    assert constant["kappa"]["value"] == 0.0 and low < 0.0 < high
    one_class = pairwise_metrics(["A"] * 3, ["A"] * 3)  # kappa 1 by convention, bounded by nothing
    assert one_class["kappa"]["value"] == 1.0 and one_class["kappa"]["ci95"] == [-1, 1]
    flat = direct_metrics({"coherence": [1, 2, 3]}, {"coherence": [2, 2, 2]})
    assert flat["dimensions"]["coherence"]["spearman"]["value"] is None


def test_correlations_perfect_and_inverse() -> None:
    assert correlations([1, 2, 3], [10, 20, 30]) == pytest.approx({"spearman": 1.0, "kendall": 1.0})
    assert correlations([1, 2, 3], [3, 2, 1]) == pytest.approx({"spearman": -1.0, "kendall": -1.0})


def test_accuracy_of_independent_items_has_the_exact_binomial_interval_whatever_the_seed() -> None:
    from scipy.stats import binomtest

    rng = np.random.default_rng(1)
    truth = list(rng.choice(["A", "B", "tie"], size=40))
    pred = [t if rng.random() < 0.6 else "tie" for t in truth]
    first, again, other = (
        pairwise_metrics(truth, pred, 3),
        pairwise_metrics(truth, pred, 3),
        pairwise_metrics(truth, pred, 4),
    )
    assert first == again
    right = sum(t == p for t, p in zip(truth, pred, strict=True))
    exact = binomtest(right, 40).proportion_ci(0.95, method="exact")
    assert first["accuracy"]["ci95"] == pytest.approx([exact.low, exact.high])
    assert other["accuracy"]["ci95"] == first["accuracy"]["ci95"]
    low, high = first["kappa"]["ci95"]
    assert low < first["kappa"]["value"] < high


@pytest.mark.parametrize("right", [0, 5])
def test_all_wrong_or_all_right_of_five_is_no_zero_width_interval(right: int) -> None:
    """The adaptive FairEval run's 0 of 5 printed 0.000 [0.000, 0.000] under the bootstrap."""
    truth = ["A", "B", "A", "tie", "B"]
    pred = truth[:right] + [{"A": "B", "B": "A", "tie": "A"}[t] for t in truth[right:]]
    accuracy_ci = pairwise_metrics(truth, pred)["accuracy"]["ci95"]
    assert accuracy_ci == pytest.approx([0.0, 0.5218] if right == 0 else [0.4782, 1.0], abs=1e-4)


def test_direct_metrics_average_over_paper_dimensions() -> None:
    truth = {"naturalness": [1, 2, 3, 4], "coherence": [1, 2, 3, 4], "overall": [4, 3, 2, 1]}
    pred = {"naturalness": [1, 2, 3, 4], "coherence": [4, 3, 2, 1], "overall": [4, 3, 2, 1]}
    out = direct_metrics(truth, pred)
    assert out["average"]["dimensions"] == ["naturalness", "coherence"]
    assert out["average"]["spearman"]["value"] == pytest.approx(0.0)
    assert out["dimensions"]["overall"]["kendall"]["value"] == pytest.approx(1.0)
    assert out["dimensions"]["overall"]["n"] == 4
