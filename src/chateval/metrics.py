"""Agreement with human labels: accuracy and Cohen's kappa (pairwise), Spearman and Kendall
(direct scoring), computed with scikit-learn and scipy.

Degenerate inputs give a defined result instead of NaN: kappa is 1.0 when prediction and truth
are the same single class and 0.0 when agreement is only by construction (one side constant);
a correlation with a constant side is 0.0. ``n`` always says how many pairs were used.
"""

import math
from collections.abc import Sequence
from typing import Any

from chateval.data.items import LABELS


def accuracy(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Share of positions where prediction equals truth (0.0 on empty input)."""
    if not truth:
        return 0.0
    return sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(truth)


def cohen_kappa(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Unweighted Cohen's kappa over the three labels A, B, tie."""
    from sklearn.metrics import cohen_kappa_score

    if not truth:
        return 0.0
    if len(set(truth) | set(predicted)) == 1:
        return 1.0
    value = float(cohen_kappa_score(list(truth), list(predicted), labels=list(LABELS)))
    return 0.0 if math.isnan(value) else value


def correlations(truth: Sequence[float], predicted: Sequence[float]) -> dict[str, float]:
    """Spearman rho and Kendall tau-b; 0.0 when either side is constant or too short."""
    from scipy.stats import kendalltau, spearmanr

    if len(truth) < 2 or len(set(truth)) < 2 or len(set(predicted)) < 2:
        return {"spearman": 0.0, "kendall": 0.0}
    rho = float(spearmanr(truth, predicted).statistic)
    tau = float(kendalltau(truth, predicted).statistic)
    return {
        "spearman": 0.0 if math.isnan(rho) else rho,
        "kendall": 0.0 if math.isnan(tau) else tau,
    }


def pairwise_metrics(truth: Sequence[str], predicted: Sequence[str]) -> dict[str, Any]:
    """Accuracy and kappa of panel labels against human labels."""
    return {
        "n": len(truth),
        "accuracy": accuracy(truth, predicted),
        "kappa": cohen_kappa(truth, predicted),
    }


def direct_metrics(truth: dict[str, list[float]], predicted: dict[str, list[float]]) -> dict[str, Any]:
    """Per-dimension correlations and their average over dimensions."""
    per_dimension = {
        name: {"n": len(truth[name]), **correlations(truth[name], predicted[name])} for name in truth
    }
    out: dict[str, Any] = {"dimensions": per_dimension}
    if per_dimension:
        out["average"] = {
            key: sum(d[key] for d in per_dimension.values()) / len(per_dimension)
            for key in ("spearman", "kendall")
        }
    return out
