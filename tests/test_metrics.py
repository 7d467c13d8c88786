"""Metrics against hand-computed cases and degenerate inputs."""

import pytest

from chateval.metrics import accuracy, cohen_kappa, correlations, direct_metrics


def test_accuracy_and_kappa_by_hand() -> None:
    truth = ["A", "A", "B", "tie"]
    pred = ["A", "B", "B", "tie"]
    assert accuracy(truth, pred) == 0.75
    # p_o = 0.75; p_e = (2*1 + 1*2 + 1*1) / 16 = 5/16; kappa = (0.75 - 5/16) / (11/16) = 7/11
    assert cohen_kappa(truth, pred) == pytest.approx(7 / 11)


def test_degenerate_cases_are_defined() -> None:
    assert accuracy([], []) == 0.0
    assert cohen_kappa([], []) == 0.0
    assert cohen_kappa(["A", "A"], ["A", "A"]) == 1.0
    assert cohen_kappa(["A", "B"], ["tie", "tie"]) == 0.0
    assert correlations([1, 2, 3], [2, 2, 2]) == {"spearman": 0.0, "kendall": 0.0}
    assert correlations([1], [1]) == {"spearman": 0.0, "kendall": 0.0}


def test_correlations_perfect_and_inverse() -> None:
    assert correlations([1, 2, 3], [10, 20, 30]) == pytest.approx({"spearman": 1.0, "kendall": 1.0})
    assert correlations([1, 2, 3], [3, 2, 1]) == pytest.approx({"spearman": -1.0, "kendall": -1.0})


def test_direct_metrics_average() -> None:
    out = direct_metrics({"x": [1, 2, 3], "y": [1, 2, 3]}, {"x": [1, 2, 3], "y": [3, 2, 1]})
    assert out["average"]["spearman"] == pytest.approx(0.0)
    assert out["dimensions"]["x"]["n"] == 3
