"""Statistics a reviewer can check by hand: cluster bootstrap, paired run comparisons, McNemar."""

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from chateval.evaluation.agreement.intervals import kappa_interval, zou_difference
from chateval.evaluation.agreement.metrics import (
    agreement_replicates,
    chance_agreement,
    direct_metrics,
    kappa_from_codes,
    label_codes,
)
from chateval.evaluation.agreement.paired import (
    compare_direct,
    compare_pairwise,
    compare_records,
    mcnemar_exact,
)
from chateval.evaluation.agreement.paired_interval import accuracy_difference_interval
from chateval.evaluation.bootstrap import N_RESAMPLES, resample_indices


def test_mcnemar_exact_matches_the_binomial_by_hand() -> None:
    # 1 vs 7 discordant items: P(X <= 1 | n=8, p=1/2) = (1 + 8) / 256, doubled for two sides.
    assert mcnemar_exact(1, 7) == pytest.approx(2 * 9 / 256)
    assert mcnemar_exact(7, 1) == pytest.approx(2 * 9 / 256)
    # 0 vs 5: (1/2)^5, doubled.
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    assert mcnemar_exact(3, 3) == pytest.approx(1.0)
    assert mcnemar_exact(0, 0) == 1.0  # no discordant item: no evidence of a difference


def test_paired_pairwise_comparison_by_hand() -> None:
    truth = ["A", "A", "B", "B", "tie"]
    run_a = ["A", "B", "B", "A", "tie"]  # right on items 1, 3, 5
    run_b = ["A", "A", "B", "B", "A"]  # right on items 1-4
    out = compare_pairwise(truth, run_a, run_b)
    assert out["n"] == 5
    assert out["accuracy"]["a"] == pytest.approx(0.6) and out["accuracy"]["b"] == pytest.approx(0.8)
    assert out["accuracy"]["difference"]["value"] == pytest.approx(0.2)
    assert out["kappa"]["a"] == pytest.approx(cohen_kappa_score(truth, run_a))
    assert out["kappa"]["b"] == pytest.approx(cohen_kappa_score(truth, run_b))
    # Item 5 only run A got right; items 2 and 4 only run B: P(X <= 1 | n=3) = 4/8, doubled -> 1.
    assert out["mcnemar"] == {"a_only_right": 1, "b_only_right": 2, "p_value": pytest.approx(1.0)}
    # The interval is Tango's from the discordant counts (tests/evaluation/test_paired_interval.py).
    assert out["accuracy"]["difference"]["ci95"] == pytest.approx(list(accuracy_difference_interval(2, 1, 5)))


def test_identical_runs_differ_by_exactly_zero() -> None:
    truth = ["A", "B", "tie", "A", "B", "A"]
    labels = ["A", "B", "B", "A", "A", "A"]
    out = compare_pairwise(truth, labels, labels)
    # Two runs that never disagree: the difference is 0, and 6 items bound it, not to [0, 0].
    difference = out["accuracy"]["difference"]
    assert difference["value"] == 0.0 and difference["ci95"][0] == pytest.approx(-difference["ci95"][1])
    assert difference["ci95"][1] > 0.3
    # Kappa's: the accuracy interval's arms over 1 - p_e (the two runs' chance agreement);
    # Zou's part of the hull shrinks to [0, 0] for runs that never disagree.
    t, x = label_codes(truth), label_codes(labels)
    slope = 1 / (1 - chance_agreement(t, x))
    kappa = out["kappa"]["difference"]
    assert kappa["value"] == 0.0
    assert kappa["ci95"] == pytest.approx([d * slope for d in difference["ci95"]])
    assert out["mcnemar"]["p_value"] == 1.0


def test_kappa_difference_widens_where_chance_agreement_moves() -> None:
    """A panel worse than chance against one better, on skewed labels: each kappa's chance
    agreement is estimated, so the difference's interval holds Zou's combination of the two
    runs' own kappa intervals, not only the accuracy interval mapped at a known chance."""
    truth = ["A"] * 8 + ["B", "tie"]
    worse = ["B", "B", "tie", "A", "A", "B", "A", "tie", "A", "A"]  # contradicts the humans
    better = ["A"] * 7 + ["B", "B", "tie"]
    out = compare_pairwise(truth, worse, better)
    kappa = out["kappa"]
    assert kappa["a"] < 0 < kappa["b"]
    t, a, b = (label_codes(x) for x in (truth, worse, better))
    sides = []
    for labels in (a, b):
        replicates = agreement_replicates(t, labels, resample_indices(10, 0))[:, 1]
        observed, chance = float(np.mean(t == labels)), chance_agreement(t, labels)
        sides.append(
            (
                kappa_interval(kappa_from_codes(t, labels), observed, chance, 10, replicates, None),
                replicates,
            )
        )
    (first, reps_a), (second, reps_b) = sides
    zou = zou_difference(kappa["a"], kappa["b"], first["ci95"], second["ci95"], reps_a, reps_b)
    low, high = kappa["difference"]["ci95"]
    assert low <= zou[0] + 1e-12 and high >= zou[1] - 1e-12
    slope = 1 / (1 - (chance_agreement(t, a) + chance_agreement(t, b)) / 2)
    accuracy = out["accuracy"]["difference"]
    mapped_low = kappa["difference"]["value"] - (accuracy["value"] - accuracy["ci95"][0]) * slope
    assert low < mapped_low - 0.05  # Zou's reaches lower than the mapped interval here


def test_pairing_narrows_the_interval_of_correlated_runs() -> None:
    """Run B fixes 8 of run A's 40 errors and breaks nothing: the paired interval excludes 0,
    though each run's own interval (about +-0.11 wide at n=80) would overlap the other's."""
    rng = np.random.default_rng(0)
    truth = list(rng.choice(["A", "B", "tie"], size=80))
    run_a = [t if i >= 40 else {"A": "B", "B": "tie", "tie": "A"}[t] for i, t in enumerate(truth)]
    run_b = [truth[i] if i < 8 else label for i, label in enumerate(run_a)]
    out = compare_pairwise(truth, run_a, run_b)
    diff = out["accuracy"]["difference"]
    assert diff["value"] == pytest.approx(8 / 80) and diff["ci95"][0] > 0
    assert out["mcnemar"]["p_value"] == pytest.approx(2 / 2**8)


def test_cluster_resamples_draw_whole_groups_by_hand() -> None:
    groups = ["d0", "d0", "d1", "d2", "d2", "d2"]
    samples = resample_indices(6, seed=5, groups=groups)
    draws = np.random.default_rng(5).integers(0, 3, size=(N_RESAMPLES, 3))
    members = [[0, 1], [2], [3, 4, 5]]
    assert len(samples) == N_RESAMPLES
    for sample, row in zip(samples, draws, strict=True):
        assert list(sample) == [i for g in row for i in members[g]]
    assert resample_indices(3, 0, groups=["one"] * 3) == []  # one group: nothing to resample


def test_cluster_bootstrap_widens_the_interval_of_clustered_data() -> None:
    """Six near-copies per dialogue carry about as much evidence as one response each."""
    rng = np.random.default_rng(1)
    base_truth = rng.normal(size=12)
    base_pred = base_truth + rng.normal(scale=1.5, size=12)
    truth = {"coherence": list(np.repeat(base_truth, 6) + rng.normal(scale=0.01, size=72))}
    pred = {"coherence": list(np.repeat(base_pred, 6) + rng.normal(scale=0.01, size=72))}
    groups = {"coherence": [f"d{i // 6}" for i in range(72)]}
    by_item = direct_metrics(truth, pred)
    by_group = direct_metrics(truth, pred, groups=groups)
    assert by_item["resampled"] == "items" and by_group["resampled"] == "12 groups"
    width = {
        name: m["dimensions"]["coherence"]["spearman"]["ci95"][1]
        - m["dimensions"]["coherence"]["spearman"]["ci95"][0]
        for name, m in (("item", by_item), ("group", by_group))
    }
    assert (
        by_item["dimensions"]["coherence"]["spearman"]["value"]
        == by_group["dimensions"]["coherence"]["spearman"]["value"]
    )
    assert width["group"] > 1.5 * width["item"]


def test_paired_direct_comparison() -> None:
    truth = {"coherence": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "naturalness": [3.0, 1.0, 2.0, 6.0, 5.0, 4.0]}
    run_a = {"coherence": [1, 2, 3, 4, 5, 6], "naturalness": [1, 1, 1, 2, 2, 2]}
    run_b = {"coherence": [6, 5, 4, 3, 2, 1], "naturalness": [1, 1, 1, 2, 2, 2]}
    groups = ["g0", "g0", "g1", "g1", "g2", "g2"]
    out = compare_direct(truth, run_a, run_b, seed=0, groups=groups)
    coherence = out["dimensions"]["coherence"]["spearman"]
    assert (coherence["a"], coherence["b"]) == (pytest.approx(1.0), pytest.approx(-1.0))
    assert coherence["difference"]["value"] == pytest.approx(-2.0)
    # Resamples drawing only g0 or only g2 predict a constant: undefined, counted, left out.
    flat = np.asarray(run_a["naturalness"])
    undefined = sum(1 for i in resample_indices(6, 0, groups) if len(set(flat[i])) == 1)
    same = out["dimensions"]["naturalness"]["kendall"]["difference"]
    assert (same["value"], same["resamples"], same["undefined_resamples"]) == (0.0, N_RESAMPLES, undefined)
    # Two runs that agree on 6 items in 3 groups: Zou's interval from each side's Fisher-z one
    # (t on 2 df), not the resampled differences' [0, 0].
    assert same["method"] == "zou-fisher-z" and same["ci95"] is not None
    assert same["ci95"][0] == pytest.approx(-same["ci95"][1]) and same["ci95"][1] > 0.5
    # A perfect ranking against its reverse over 3 groups: each side's interval is no narrower
    # than a perfect ranking of 3 units gets (t on 2 df), so the difference is not told from 0.
    assert coherence["difference"]["ci95"] is not None
    low, high = coherence["difference"]["ci95"]
    assert low == pytest.approx(-2.0) and 0 < high < 1
    assert out["average"]["spearman"]["difference"]["value"] == pytest.approx(-1.0)
    assert out["resampled"] == "3 groups"


def test_compare_records_uses_only_items_both_runs_scored() -> None:
    a = [
        {"item_id": "1", "label": "A", "human_label": "A"},
        {"item_id": "2", "label": None, "human_label": "B"},  # lost every verdict in run A
        {"item_id": "3", "label": "B", "human_label": "tie"},
    ]
    b = [
        {"item_id": "1", "label": "B", "human_label": "A"},
        {"item_id": "2", "label": "B", "human_label": "B"},
        {"item_id": "3", "label": "tie", "human_label": "tie"},
        {"item_id": "4", "label": "A", "human_label": "A"},  # not in run A
    ]
    out = compare_records("pairwise", a, b)
    assert out is not None and out["n"] == 2
    assert out["mcnemar"] == {"a_only_right": 1, "b_only_right": 1, "p_value": pytest.approx(1.0)}
    assert compare_records("pairwise", a, [{"item_id": "9", "label": "A", "human_label": "A"}]) is None
