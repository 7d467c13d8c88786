"""The paired accuracy difference's interval (Tango's score interval with a t reading): its
bounds are where the score statistic meets the critical value, with the constrained maximum
likelihood checked by a numerical optimiser; it never has zero width; it moves with the
discordant items; and the committed exact-coverage table holds it at 94% or more."""

import json
import math
from pathlib import Path

import pytest
from scipy.optimize import minimize_scalar

from chateval.evaluation.agreement.paired_interval import (
    accuracy_difference_interval,
    critical_value,
    score_statistic,
)

COVERAGE_JSON = Path(__file__).parents[2] / "docs" / "performance" / "paired_difference.json"


def _statistic_by_optimiser(b_only: int, a_only: int, n: int, d0: float) -> float:
    """Z(d0) with P(right in A only) maximised numerically under the constraint, not by the
    quadratic's root the module uses."""
    rest = n - b_only - a_only

    def negative_log_likelihood(q: float) -> float:
        return -(b_only * math.log(q + d0) + a_only * math.log(q) + rest * math.log(1 - 2 * q - d0))

    found = minimize_scalar(
        negative_log_likelihood, bounds=(max(0.0, -d0) + 1e-10, (1 - d0) / 2 - 1e-10), method="bounded"
    )
    q = float(found.x)
    return (b_only - a_only - n * d0) / math.sqrt(n * (2 * q + d0 - d0 * d0))


@pytest.mark.parametrize(("b_only", "a_only", "n"), [(7, 3, 30), (2, 1, 5), (10, 2, 80), (0, 5, 40)])
def test_the_bounds_are_where_the_score_statistic_meets_the_critical_value(
    b_only: int, a_only: int, n: int
) -> None:
    low, high = accuracy_difference_interval(b_only, a_only, n)
    z = critical_value(n, b_only + a_only)
    assert low < (b_only - a_only) / n < high
    for bound, target in ((low, z), (high, -z)):
        assert score_statistic(b_only, a_only, n, bound) == pytest.approx(target, abs=1e-6)
        assert _statistic_by_optimiser(b_only, a_only, n, bound) == pytest.approx(target, rel=1e-3)


def test_runs_that_never_disagree_get_an_interval_that_shrinks_with_the_items() -> None:
    widths = []
    for n in (12, 40, 200):
        low, high = accuracy_difference_interval(0, 0, n)
        assert low == pytest.approx(-high) and high > 0
        widths.append(high)
    assert widths == sorted(widths, reverse=True)
    # 12 items: Z^2 = n d / (1 - d) at the bound, read with t on 6 degrees of freedom.
    assert widths[0] == pytest.approx(critical_value(12, 0) ** 2 / (12 + critical_value(12, 0) ** 2))


def test_more_items_right_in_b_alone_move_the_interval_up() -> None:
    intervals = [accuracy_difference_interval(b_only, 2, 40) for b_only in range(0, 10)]
    assert all(x[0] < y[0] and x[1] < y[1] for x, y in zip(intervals, intervals[1:], strict=False))
    assert accuracy_difference_interval(0, 0, 0) == (-1.0, 1.0)


def test_the_committed_exact_coverage_holds_every_cell() -> None:
    rows = json.loads(COVERAGE_JSON.read_text())["rows"]
    ours = [row for row in rows if row["reading"] != "normal"]
    assert {row["items"] for row in ours} >= {5, 12, 40, 200}
    assert all(row["worst"]["coverage"] >= 0.94 for row in ours)
    # The reading it replaced does not: the reason for the t quantile.
    assert min(row["worst"]["coverage"] for row in rows if row["reading"] == "normal") < 0.94
