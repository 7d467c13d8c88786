"""Metrics against hand-computed cases, scikit-learn / scipy on random data, degenerate inputs."""

import numpy as np
import pytest
from scipy.stats import kendalltau, spearmanr
from sklearn.metrics import cohen_kappa_score

from chateval.evaluation.agreement.correlations import correlations
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


def test_degenerate_cases_are_defined() -> None:
    assert accuracy([], []) == 0.0
    assert cohen_kappa([], []) == 0.0
    assert cohen_kappa(["A", "A"], ["A", "A"]) == 1.0
    assert cohen_kappa(["A", "B"], ["tie", "tie"]) == 0.0
    # A correlation of a constant side, or of fewer than 2 pairs, is undefined, not 0.
    assert correlations([1, 2, 3], [2, 2, 2]) == {"spearman": None, "kendall": None}
    assert correlations([1], [1]) == {"spearman": None, "kendall": None}
    empty = pairwise_metrics([], [])
    assert empty["n"] == 0 and empty["accuracy"] == {"value": 0.0, "ci95": [0.0, 0.0]}
    constant = pairwise_metrics(["A", "B", "tie", "A"], ["tie"] * 4)
    assert constant["kappa"] == {"value": 0.0, "ci95": [0.0, 0.0]}
    flat = direct_metrics({"coherence": [1, 2, 3]}, {"coherence": [2, 2, 2]})
    assert flat["dimensions"]["coherence"]["spearman"]["value"] is None


def test_correlations_perfect_and_inverse() -> None:
    assert correlations([1, 2, 3], [10, 20, 30]) == pytest.approx({"spearman": 1.0, "kendall": 1.0})
    assert correlations([1, 2, 3], [3, 2, 1]) == pytest.approx({"spearman": -1.0, "kendall": -1.0})


def test_bootstrap_is_seeded_and_brackets_the_value() -> None:
    rng = np.random.default_rng(1)
    truth = list(rng.choice(["A", "B", "tie"], size=40))
    pred = [t if rng.random() < 0.6 else "tie" for t in truth]
    first, again, other = (
        pairwise_metrics(truth, pred, 3),
        pairwise_metrics(truth, pred, 3),
        pairwise_metrics(truth, pred, 4),
    )
    assert first == again
    assert first["accuracy"]["ci95"] != other["accuracy"]["ci95"]
    low, high = first["accuracy"]["ci95"]
    assert low < first["accuracy"]["value"] < high


def test_direct_metrics_average_over_paper_dimensions() -> None:
    truth = {"naturalness": [1, 2, 3, 4], "coherence": [1, 2, 3, 4], "overall": [4, 3, 2, 1]}
    pred = {"naturalness": [1, 2, 3, 4], "coherence": [4, 3, 2, 1], "overall": [4, 3, 2, 1]}
    out = direct_metrics(truth, pred)
    assert out["average"]["dimensions"] == ["naturalness", "coherence"]
    assert out["average"]["spearman"]["value"] == pytest.approx(0.0)
    assert out["dimensions"]["overall"]["kendall"]["value"] == pytest.approx(1.0)
    assert out["dimensions"]["overall"]["n"] == 4
