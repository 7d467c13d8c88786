"""Intervals of agreement with few labels (chateval.evaluation.agreement.intervals): exact where
the rows are independent, wider (never narrower) where they are not, never zero-width where
the value is not known exactly; the coverage they reach is measured by
scripts/simulate_intervals.py (docs/performance/intervals.json, checked below)."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest, t

from chateval.evaluation.agreement.correlations import correlation_pair
from chateval.evaluation.agreement.intervals import (
    correlation_difference_interval,
    correlation_interval,
    effective_n,
    misranked_bounds,
)
from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.evaluation.binomial import clopper_pearson

INTERVALS_JSON = Path(__file__).parents[2] / "docs" / "performance" / "intervals.json"


@pytest.mark.parametrize(("right", "n"), [(0, 5), (5, 5), (3, 7), (40, 41), (0, 1)])
def test_clopper_pearson_is_scipys_exact_interval(right: int, n: int) -> None:
    exact = binomtest(right, n).proportion_ci(0.95, method="exact")
    assert clopper_pearson(right, n) == pytest.approx((exact.low, exact.high))


def test_the_design_effect_only_ever_shrinks_the_count() -> None:
    assert effective_n(40, variance=0.001, iid_variance=0.004, clusters=None) == 40  # less spread: n
    assert effective_n(40, variance=0.008, iid_variance=0.004, clusters=None) == 20  # twice: n / 2
    assert effective_n(40, variance=0.0, iid_variance=0.0, clusters=None) == 40  # all right: n
    with_clusters = effective_n(40, variance=0.004, iid_variance=0.004, clusters=5)
    assert with_clusters == pytest.approx(40 * (1.959964 / 2.776445) ** 2, rel=1e-5)  # t with 4 df
    assert effective_n(40, variance=0.004, iid_variance=0.004, clusters=1) == 1  # one item: one
    # Every row right: nothing measures how rows of an item move together; the items count.
    assert effective_n(80, variance=0.0, iid_variance=0.0, clusters=40) == 40


def test_an_items_rows_that_always_agree_are_one_row_of_evidence() -> None:
    """Ten items, each judged twice the same way: the interval is (about) ten items', not 20's."""
    truth = ["A", "B", "A", "tie", "B", "A", "B", "A", "A", "B"]
    predicted = ["A", "B", "B", "tie", "B", "A", "A", "A", "A", "B"]
    items = pairwise_metrics(truth, predicted)
    doubled = pairwise_metrics(truth * 2, predicted * 2, groups=[f"q{i}" for i in range(10)] * 2)
    as_if_independent = pairwise_metrics(truth * 2, predicted * 2)
    assert doubled["accuracy"]["effective_n"] < 10 < as_if_independent["accuracy"]["effective_n"]
    width = {
        name: np.diff(m["accuracy"]["ci95"])[0]
        for name, m in (("items", items), ("doubled", doubled), ("independent", as_if_independent))
    }
    assert width["doubled"] >= width["items"] > width["independent"]


def test_fewer_right_never_gives_a_higher_clustered_lower_bound() -> None:
    """40 items x 2 orders: every row right takes the items as the count; one wrong row must
    not claim more (its design effect, measured on one wrong row, looks like independence)."""
    groups = [f"q{i}" for i in range(40)] * 2
    lows = []
    for wrong in range(6):
        predicted = ["B" if i < wrong else "A" for i in range(80)]  # wrong rows in distinct items
        accuracy = pairwise_metrics(["A"] * 80, predicted, groups=groups, seed=2)["accuracy"]
        lows.append(accuracy["ci95"][0])
    assert all(a >= b for a, b in zip(lows, lows[1:], strict=False)), lows
    assert lows[0] == pytest.approx(clopper_pearson(40, 40)[0])


def test_kappa_interval_holds_the_value_and_stays_in_bounds() -> None:
    rng = np.random.default_rng(3)
    for n in (5, 12, 60):
        truth = list(rng.choice(["A", "B", "tie"], size=n))
        predicted = [t if rng.random() < 0.6 else "A" for t in truth]
        kappa = pairwise_metrics(truth, predicted, seed=1)["kappa"]
        low, high = kappa["ci95"]
        assert -1 <= low < kappa["value"] <= high <= 1 and low < high


def test_a_perfect_ranking_of_five_items_is_no_certainty() -> None:
    out = direct_metrics({"coherence": [1, 2, 3, 4, 5]}, {"coherence": [2, 3, 4, 5, 6]})
    rho = out["dimensions"]["coherence"]["spearman"]
    assert rho["value"] == pytest.approx(1.0)
    low, high = rho["ci95"]
    assert low < 0.9 and high == pytest.approx(1.0)


def test_too_few_units_give_no_correlation_interval() -> None:
    out = correlation_interval(0.5, np.asarray([0.4, 0.6, 0.5]), units=2, rows=12)
    assert out["ci95"] is None and out["reason"] == "2 items or groups: too few for an interval"


def fisher_z(value: float, replicates: np.ndarray, units: int, rows: int) -> list[float]:
    """The Fisher-z interval alone (the module doc), without the floors near +-1."""
    spread = max(np.std(np.arctanh(replicates)) * np.sqrt(units / (units - 1)), 1 / np.sqrt(rows - 3))
    half = t.ppf(0.975, units - 1) * spread
    return [float(np.tanh(np.arctanh(value) - half)), float(np.tanh(np.arctanh(value) + half))]


def test_a_perfect_ranking_of_few_groups_claims_what_its_groups_can_show() -> None:
    """6 dialogues of 6 responses ranked perfectly: no resample varies, and Fisher's floor in 36
    rows would claim [0.988, 1]; a few misranked rows of the 36 could hide [0.758, 1], and 6
    single items, less evidence, show less. A measured spread (a typical panel) keeps its
    Fisher-z interval."""
    perfect_groups = correlation_interval(1.0, np.ones(500), units=6, rows=36)
    assert perfect_groups["ci95"] == pytest.approx([0.758, 1.0], abs=1e-3)
    assert correlation_interval(1.0, np.ones(500), 6, 6)["ci95"] == pytest.approx([0.095, 1.0], abs=1e-3)
    assert correlation_interval(-1.0, -np.ones(500), 6, 36)["ci95"] == pytest.approx([-1.0, -0.758], abs=1e-3)
    rng = np.random.default_rng(2)
    typical = np.tanh(np.arctanh(0.5) + rng.normal(0, 0.2, 500))
    assert correlation_interval(0.5, typical, 6, 36)["ci95"] == pytest.approx(fisher_z(0.5, typical, 6, 36))


def test_a_typical_panels_interval_is_its_fisher_z_interval() -> None:
    """Spearman 0.5 over 20 items with the bootstrap's spread of such a panel: the floor of a few
    misranked rows lies inside the Fisher-z interval and changes nothing."""
    typical = np.tanh(np.arctanh(0.5) + np.random.default_rng(3).normal(0, 0.25, 1000))
    found = correlation_interval(0.5, typical, 20, 20)["ci95"]
    assert found == pytest.approx(fisher_z(0.5, typical, 20, 20))
    assert found[0] < misranked_bounds(0.5, 20, t.ppf(0.975, 19))[0]  # type: ignore[index]


def panel_scoring_some_at_random(
    rng: np.random.Generator, size: tuple[int, ...], share: float
) -> tuple[np.ndarray, np.ndarray]:
    """Human scores 1-3 (25%, 50%, 25%) and a panel's 1-5 that copies their ranking (1, 3, 5)
    but scores a ``share`` of the items uniformly at random."""
    human = rng.choice(3, size=size, p=[0.25, 0.5, 0.25]).astype(np.int8) + 1
    panel = np.where(rng.random(size) < share, rng.integers(1, 6, size, dtype=np.int8), 2 * human - 1)
    return human, panel


@pytest.mark.parametrize(("items", "share"), [(6, 0.55), (10, 0.35), (20, 0.2), (40, 0.1)])
def test_a_perfect_ranking_does_not_exclude_a_panel_that_gives_one_often(items: int, share: float) -> None:
    """A panel that ranks as the humans do but scores a share of the items at random ranks
    ``items`` items perfectly at least 2.5% of the time: a perfect ranking's interval must hold
    its Spearman and Kendall (20 items: tau 0.76, which Fisher-z's [0.986, 1] excluded)."""
    human, panel = panel_scoring_some_at_random(np.random.default_rng(1), (10_000, items), share)
    human_order, panel_order = (np.sign(x[:, :, None] - x[:, None, :]) for x in (human, panel))
    assert np.mean(np.all(human_order == panel_order, axis=(1, 2))) >= 0.025
    population = panel_scoring_some_at_random(np.random.default_rng(2), (200_000,), share)
    rho, tau = correlation_pair(*(x.astype(float) for x in population))  # type: ignore[misc]
    low, high = correlation_interval(1.0, np.ones(1000), items, items)["ci95"]  # type: ignore[misc]
    assert low <= tau < rho and high == 1.0


def test_clustered_correlations_widen_with_the_groups_not_the_rows() -> None:
    """60 responses in 6 groups of 10 whose scores move together: wider than 60 independent
    items' interval would be."""
    rng = np.random.default_rng(5)
    quality = np.repeat(rng.normal(0, 1, 6), 10) + rng.normal(0, 0.3, 60)
    human = np.round(quality + rng.normal(0, 0.3, 60))
    panel = np.round(quality + rng.normal(0, 0.3, 60))
    groups = {"coherence": [f"g{g}" for g in np.repeat(np.arange(6), 10)]}
    grouped = direct_metrics({"coherence": list(human)}, {"coherence": list(panel)}, 0, groups)
    alone = direct_metrics({"coherence": list(human)}, {"coherence": list(panel)}, 0)

    def width(m: dict) -> float:  # type: ignore[type-arg]
        return float(np.diff(m["dimensions"]["coherence"]["kendall"]["ci95"])[0])

    assert width(grouped) > width(alone)


def test_the_committed_simulation_shows_every_interval_holding() -> None:
    """docs/performance/intervals.json (scripts/simulate_intervals.py): every row of every
    statistic has at least 2,000 cases (so 94% is told from 95%; correlations leave out the few
    undefined ones) and covers at least 94%."""
    rows = json.loads(INTERVALS_JSON.read_text())["rows"]
    statistics = {r["statistic"] for r in rows}
    assert {"accuracy", "kappa", "Spearman", "Kendall", "length share", "calibrated rating"} <= statistics
    for row in rows:
        assert row["cases"] >= 1900, row
        assert row["coverage"] >= 0.94, row


def test_the_performance_page_shows_the_committed_rows() -> None:
    """docs/performance.md's table of intervals is intervals.json's, row for row
    (``scripts/simulate_intervals.py --table -o docs/performance/intervals.json`` prints it)."""
    header = "| statistic | setting | cases | coverage of 95% CI | mean width |"
    page = (INTERVALS_JSON.parents[1] / "performance.md").read_text(encoding="utf-8")
    shown = page.split(header + "\n| --- | --- | --- | --- | --- |\n", 1)[1].split("\n\n", 1)[0]
    rows = json.loads(INTERVALS_JSON.read_text())["rows"]
    expected = [
        f"| {r['statistic']} | {r['setting']} | {r['cases']} | {r['coverage']:.1%} | {r['width']:.3f} |"
        for r in rows
    ]
    assert shown.splitlines() == expected


def test_zous_interval_combines_the_two_sides_through_their_resamples_correlation() -> None:
    """By hand from each side's Fisher-z interval and the replicates' correlation c."""
    rng = np.random.default_rng(4)
    shared = rng.normal(0.0, 0.1, 1000)
    reps_a = np.clip(0.3 + shared + rng.normal(0.0, 0.05, 1000), -1, 1)
    reps_b = np.clip(0.5 + shared + rng.normal(0.0, 0.05, 1000), -1, 1)
    found = correlation_difference_interval(0.3, 0.5, reps_a, reps_b, 20, 20)
    side_a, side_b = correlation_interval(0.3, reps_a, 20, 20), correlation_interval(0.5, reps_b, 20, 20)
    assert side_a["ci95"] is not None and side_b["ci95"] is not None
    (la, ua), (lb, ub) = side_a["ci95"], side_b["ci95"]
    c = np.corrcoef(reps_a, reps_b)[0, 1]
    low = 0.2 - np.sqrt((0.5 - lb) ** 2 + (ua - 0.3) ** 2 - 2 * c * (0.5 - lb) * (ua - 0.3))
    high = 0.2 + np.sqrt((ub - 0.5) ** 2 + (0.3 - la) ** 2 - 2 * c * (ub - 0.5) * (0.3 - la))
    assert found["ci95"] == pytest.approx([low, high])
    assert found["method"] == "zou-fisher-z"
    # Correlated sides (c about 0.8) give a narrower interval than independent ones would.
    independent = np.sqrt((0.5 - lb) ** 2 + (ua - 0.3) ** 2)
    assert 0.2 - low < independent
