"""Win rates, length bias and per-system direct means against hand-computed values, the win
rates' intervals against ``proportion_intervals`` of hand-built per-prompt sums, and the direct
means' vectorised bootstrap."""

import itertools

import numpy as np
import pytest
from scipy.stats import beta
from scipy.stats import t as t_dist

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.direct_systems import ScoredResponse, direct_systems
from chateval.evaluation.systems.length_bias import length_bias
from chateval.evaluation.systems.mean_interval import mean_interval
from chateval.evaluation.systems.proportion_interval import mean_intervals, proportion_intervals
from chateval.evaluation.systems.win_rates import win_rates


def c(
    prompt: str, a: str, b: str, outcome: float, soft: float | None = None, la: int = 0, lb: int = 0
) -> Comparison:
    return Comparison(prompt, a, b, outcome, soft, la, lb)


# x beats y twice (once as B) and loses once; x ties z; z beats y.
TINY = [
    c("p1", "x", "y", 1.0, 0.8),
    c("p1", "x", "z", 0.5, 0.5),
    c("p2", "y", "x", 0.0, 0.3),
    c("p2", "z", "y", 1.0),
    c("p3", "x", "y", 0.0, 0.4),
]


def test_pair_and_overall_records_by_hand() -> None:
    out = win_rates(TINY)
    assert out["systems"] == ["x", "y", "z"]
    assert (out["prompts"], out["comparisons"]) == (3, 5)
    pairs = {(p["system_a"], p["system_b"]): p for p in out["pairs"]}
    assert set(pairs) == {("x", "y"), ("x", "z"), ("y", "z")}
    xy = pairs["x", "y"]
    assert (xy["n"], xy["prompts"], xy["wins"], xy["ties"], xy["losses"]) == (3, 3, 2, 0, 1)
    assert xy["win_rate"]["value"] == pytest.approx(2 / 3)
    # soft from x's side: 0.8, 1 - 0.3, 0.4
    assert xy["soft_win_rate"] is not None
    assert xy["soft_win_rate"]["value"] == pytest.approx((0.8 + 0.7 + 0.4) / 3)
    assert xy["n_soft"] == 3
    xz = pairs["x", "z"]
    assert (xz["wins"], xz["ties"], xz["losses"]) == (0, 1, 0)
    # One tie: an exact interval of 0.5 from 1 comparison, not the bootstrap's [0.5, 0.5].
    assert xz["win_rate"]["value"] == 0.5 and xz["win_rate"]["method"] == "clopper-pearson-prompts"
    low, high = xz["win_rate"]["ci95"]
    assert low == pytest.approx(1 - high) and high - low > 0.85
    yz = pairs["y", "z"]
    assert (yz["wins"], yz["ties"], yz["losses"], yz["win_rate"]["value"]) == (0, 0, 1, 0.0)
    assert yz["soft_win_rate"] is None and yz["n_soft"] == 0

    overall = {s["system"]: s for s in out["overall"]}
    assert [
        (overall[s]["n"], overall[s]["wins"], overall[s]["ties"], overall[s]["losses"]) for s in "xyz"
    ] == [
        (4, 2, 1, 1),
        (4, 1, 0, 3),
        (2, 1, 1, 0),
    ]
    assert [overall[s]["win_rate"]["value"] for s in "xyz"] == pytest.approx([2.5 / 4, 1 / 4, 1.5 / 2])
    soft_x = overall["x"]["soft_win_rate"]
    assert soft_x is not None and soft_x["value"] == pytest.approx((0.8 + 0.5 + 0.7 + 0.4) / 4)


def test_systems_order_orients_the_pairs() -> None:
    out = win_rates(TINY, systems=["y", "x", "z"])
    yx = next(p for p in out["pairs"] if p["system_a"] == "y" and p["system_b"] == "x")
    assert (yx["wins"], yx["losses"]) == (1, 2)
    assert yx["win_rate"]["value"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="not in the given list"):
        win_rates(TINY, systems=["x", "y"])
    with pytest.raises(ValueError, match="without any comparison"):
        win_rates(TINY, systems=["x", "y", "z", "w"])


def test_intervals_come_from_each_pairs_per_prompt_sums() -> None:
    rng = np.random.default_rng(3)
    systems = ["s1", "s2", "s3"]
    comparisons = [
        c(f"p{p}", a, b, float(rng.choice([0.0, 0.5, 1.0])), float(rng.random()))
        for p in range(12)
        for a, b in itertools.combinations(systems, 2)
        for _ in range(2)
        if rng.random() < 0.8  # not every pair on every prompt
    ]
    out = win_rates(comparisons)
    for pair in out["pairs"]:
        sums, soft, squares, counts = np.zeros(12), np.zeros(12), np.zeros(12), np.zeros(12)
        for cmp in comparisons:
            if {cmp.system_a, cmp.system_b} != {pair["system_a"], pair["system_b"]}:
                continue
            p = int(cmp.prompt[1:])
            flip = cmp.system_a != pair["system_a"]
            sums[p] += 1 - cmp.outcome if flip else cmp.outcome
            assert cmp.soft is not None
            soft[p] += 1 - cmp.soft if flip else cmp.soft
            squares[p] += (1 - cmp.soft if flip else cmp.soft) ** 2
            counts[p] += 1
        assert pair["win_rate"] == proportion_intervals(sums, counts)[0]
        assert pair["soft_win_rate"] == mean_intervals(soft[:, None], squares[:, None], counts[:, None])[0]
        assert pair["prompts"] == int((counts > 0).sum())
        assert pair["win_rate"]["method"] == "wilson-cluster"


def test_a_systems_comparisons_on_one_prompt_count_once_below_five_prompts() -> None:
    # On each of 3 prompts x meets b, c and d once and a 3 times (the 3 sharing both answers),
    # and wins all 6 on two prompts, loses all 6 on the third: its 18 comparisons share its
    # answer on each prompt. Its win rate against the field, 12 / 18, is read from 3 prompt
    # units, the exact interval of 2 in 3; taken as independent (12 of 18) it was far narrower.
    opponents = ["a", "a", "a", "b", "c", "d"]
    comparisons = [
        c(f"p{p}", "x", o, 0.0 if p == 2 else 1.0, 0.1 if p == 2 else 0.9)
        for p in range(3)
        for o in opponents
    ]
    out = win_rates(comparisons)
    x = next(s for s in out["overall"] if s["system"] == "x")
    assert x["win_rate"]["value"] == pytest.approx(2 / 3)
    assert x["win_rate"]["method"] == "clopper-pearson-prompts"
    assert x["win_rate"]["effective_n"] == pytest.approx(3.0)
    assert x["win_rate"]["ci95"] == pytest.approx([beta.ppf(0.025, 2, 2), 0.975 ** (1 / 3)])
    assert x["win_rate"]["ci95"][0] < beta.ppf(0.025, 12, 7) - 0.2
    # The soft rate below 5 prompts gets the hard rate's interval, prompt units included.
    assert x["soft_win_rate"] == proportion_intervals(np.array([5.4, 5.4, 0.6]), np.full(3, 6.0))[0]
    # The pair judged 3 times on each prompt: 9 comparisons, 3 units, the same interval.
    xa = next(p for p in out["pairs"] if p["system_b"] == "a")
    assert (xa["n"], xa["prompts"]) == (9, 3) and xa["win_rate"]["effective_n"] == pytest.approx(3.0)
    assert xa["win_rate"]["ci95"] == pytest.approx(x["win_rate"]["ci95"])


def test_ties_and_few_verdicts_never_give_a_zero_width_interval() -> None:
    # The pair that tied 3 times on 3 prompts had [0.500, 0.500]; one prompt's win and loss too.
    tied = win_rates([c(f"p{k}", "x", "y", 0.5) for k in range(3)])
    assert tied["pairs"][0]["win_rate"]["ci95"] == pytest.approx([0.0387, 0.9613], abs=1e-4)
    one_prompt = win_rates([c("only", "x", "y", 1.0), c("only", "x", "y", 0.0)])
    low, high = one_prompt["pairs"][0]["win_rate"]["ci95"]
    assert low < 0.5 < high and high - low > 0.5


def test_length_bias_by_hand() -> None:
    comparisons = [
        c("p1", "x", "y", 1.0, la=100, lb=50),  # longer won
        c("p2", "x", "y", 0.0, la=100, lb=50),  # shorter won
        c("p3", "x", "y", 0.0, la=10, lb=50),  # longer won (B)
        c("p4", "y", "x", 1.0, la=80, lb=20),  # longer won
        c("p5", "x", "y", 1.0, la=30, lb=30),  # equal lengths: left out
        c("p6", "x", "y", 0.5, la=100, lb=5),  # tie: left out
        c("p6", "y", "x", 0.5, la=1, lb=5),  # tie: left out
    ]
    out = length_bias(comparisons)
    assert (out["n"], out["longer_won"], out["equal_lengths"], out["ties"]) == (4, 3, 1, 2)
    assert out["share"] is not None and out["share"]["value"] == pytest.approx(0.75)
    # 4 decisive verdicts on 4 prompts: under 5 prompts, the exact interval of 3 in 4.
    assert out["share"]["ci95"] == proportion_intervals(np.array([1.0, 0.0, 1.0, 1.0]), np.ones(4))[0]["ci95"]
    assert out["share"]["ci95"] == pytest.approx([beta.ppf(0.025, 3, 2), beta.ppf(0.975, 4, 1)])
    assert out["share"]["method"] == "clopper-pearson-prompts"
    assert win_rates(comparisons)["length_bias"] == out
    assert length_bias([c("p1", "x", "y", 0.5, la=3, lb=4)])["share"] is None


def test_two_decisive_verdicts_for_the_longer_answer_are_not_a_certain_bias() -> None:
    # Was "the longer answer won 0.000 [0.000, 0.000] of 2 decisive verdicts"; by hand, the
    # exact interval of 2 in 2: [0.025^(1/2), 1].
    out = length_bias([c("p1", "x", "y", 1.0, la=9, lb=3), c("p2", "x", "y", 0.0, la=3, lb=9)])
    assert out["share"] is not None and out["share"]["value"] == 1.0
    assert out["share"]["ci95"] == pytest.approx([0.025**0.5, 1.0])


def test_comparison_validation() -> None:
    with pytest.raises(ValueError, match="outcome"):
        c("p", "x", "y", 0.7)
    with pytest.raises(ValueError, match="soft"):
        c("p", "x", "y", 1.0, soft=1.5)
    with pytest.raises(ValueError, match="two systems"):
        c("p", "x", "x", 1.0)
    with pytest.raises(ValueError, match="no comparisons"):
        win_rates([])


def test_direct_means_and_paired_differences_by_hand() -> None:
    rows = [
        ScoredResponse("q1", "a", {"coherence": 4.0, "fluency": 3.0}),
        ScoredResponse("q1", "b", {"coherence": 2.0, "fluency": 3.0}),
        ScoredResponse("q2", "a", {"coherence": 5.0}),  # no fluency score
        ScoredResponse("q2", "b", {"coherence": 4.0, "fluency": 1.0}),
        ScoredResponse("q3", "b", {"coherence": 3.0, "fluency": 2.0}),  # a not scored on q3
    ]
    out = direct_systems(rows, scales={"coherence": (1, 5), "fluency": (1, 5)})
    assert (out["systems"], out["dimensions"], out["prompts"]) == (["a", "b"], ["coherence", "fluency"], 3)
    means = {(m["system"], m["dimension"]): m for m in out["means"]}
    assert means["a", "coherence"]["mean"]["value"] == pytest.approx(4.5)
    assert means["a", "coherence"]["n"] == 2
    # One prompt measures no spread: the whole scale.
    assert means["a", "fluency"]["mean"] == {"value": 3.0, "ci95": [1.0, 5.0]}
    assert means["b", "coherence"]["mean"]["value"] == pytest.approx(3.0)
    # b's coherence 2, 4, 3 on the scale 1-5: mean_interval (tested below) within the scale.
    assert means["b", "coherence"]["mean"] == mean_interval(np.array([2.0, 4.0, 3.0]), (1, 5))
    assert means["b", "fluency"]["mean"]["value"] == pytest.approx(2.0)
    diffs = {d["dimension"]: d for d in out["differences"]}
    # coherence: a - b on q1 (+2) and q2 (+1); q3 has no a.
    assert (diffs["coherence"]["system_a"], diffs["coherence"]["system_b"]) == ("a", "b")
    assert diffs["coherence"]["n"] == 2
    coherence = diffs["coherence"]["difference"]
    assert coherence is not None and coherence["value"] == pytest.approx(1.5)
    assert coherence == mean_interval(np.array([2.0, 1.0]), (-4, 4))
    assert diffs["fluency"]["n"] == 1
    assert diffs["fluency"]["difference"] == {"value": 0.0, "ci95": [-4.0, 4.0]}


def test_a_mean_interval_is_wilsons_at_the_measured_effective_count() -> None:
    values = np.array([3.0, 4.0, 5.0, 4.0, 3.0, 5.0])  # on 1-10: mean 4, rescaled 1/3
    p, spread = 1 / 3, 0.8 / 81  # the sample variance 0.8, rescaled by the scale's width 9
    count, q = 6 * p * (1 - p) / spread, t_dist.ppf(0.975, 5)
    centre = (p + q * q / (2 * count)) / (1 + q * q / count)
    half = q / (1 + q * q / count) * np.sqrt(p * (1 - p) / count + q * q / (4 * count * count))
    expected = [1 + 9 * (centre - half), 1 + 9 * (centre + half)]
    assert mean_interval(values, (1, 10)) == {"value": 4.0, "ci95": pytest.approx(expected)}


def test_scores_that_never_vary_get_a_width_and_all_tens_no_more_than_nine_tens_and_a_nine() -> None:
    all_sevens = mean_interval(np.full(8, 7.0), (1, 10))["ci95"]
    assert all_sevens[0] < 7.0 < all_sevens[1]
    all_tens = mean_interval(np.full(10, 10.0), (1, 10))["ci95"]
    one_nine = mean_interval(np.array([10.0] * 9 + [9.0]), (1, 10))["ci95"]
    assert all_tens[1] == 10.0 and 9.0 < all_tens[0] < 10.0
    assert all_tens[0] >= one_nine[0]
    assert mean_interval(np.array([5.0]), (1, 10))["ci95"] == [1.0, 10.0]  # one prompt: the scale


def test_direct_paired_difference_is_narrower_than_the_means() -> None:
    # Prompt difficulty varies a lot; system a is a steady 0.5 better: pairing removes the
    # difficulty, so the difference's interval is far narrower than either mean's.
    rng = np.random.default_rng(0)
    rows = []
    for p in range(40):
        base = rng.normal(3, 1)
        rows.append(ScoredResponse(f"q{p}", "a", {"overall": base + 0.5 + rng.normal(0, 0.1)}))
        rows.append(ScoredResponse(f"q{p}", "b", {"overall": base + rng.normal(0, 0.1)}))
    out = direct_systems(rows)
    width = {m["system"]: m["mean"]["ci95"][1] - m["mean"]["ci95"][0] for m in out["means"]}
    difference = out["differences"][0]["difference"]
    assert difference is not None
    low, high = difference["ci95"]
    assert low < 0.5 < high
    assert high - low < width["a"] / 5


def test_direct_errors() -> None:
    with pytest.raises(ValueError, match="scored twice"):
        direct_systems([ScoredResponse("q", "a", {"x": 1.0}), ScoredResponse("q", "a", {"x": 2.0})])
    with pytest.raises(ValueError, match="differ"):
        direct_systems([ScoredResponse("q", "a", {"x": 1.0})], systems=["a", "b"])
    with pytest.raises(ValueError, match="no scored"):
        direct_systems([])
