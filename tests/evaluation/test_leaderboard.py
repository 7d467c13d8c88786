"""The Davidson-Bradley-Terry leaderboard: against choix's Bradley-Terry MLE and the closed form
of two systems, its intervals against hand-computed ones, a planted ranking recovered with
honest interval coverage, length control, the ridge's size on a real run."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import kendalltau

from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.davidson_fit import (
    BASE_RATING,
    ELO_SCALE,
    RIDGE,
    fit_davidson,
)
from chateval.evaluation.systems.davidson_intervals import CLUSTERED, INDEPENDENT
from chateval.evaluation.systems.davidson_simulation import simulate_davidson
from chateval.evaluation.systems.leaderboard import (
    fit_board,
    leaderboard,
    rating_difference,
    shared_ranks,
)
from chateval.evaluation.systems.tables import resolved_sentence

PLANTED = {"s0": 0.0, "s1": 0.6, "s2": -0.3, "s3": 1.1, "s4": -0.9}


def all_pairs(systems: list[str], prompts: int) -> list[tuple[str, str, str]]:
    return [(f"p{p}", a, b) for p in range(prompts) for a, b in itertools.combinations(systems, 2)]


def test_without_ties_matches_choix_bradley_terry() -> None:
    choix = pytest.importorskip("choix", reason="the reference fit; a dev dependency (pip install -e .[dev])")
    names = list(PLANTED)
    comparisons = simulate_davidson(PLANTED, 0.0, all_pairs(names, 60), np.random.default_rng(7))
    assert all(cmp.outcome != 0.5 for cmp in comparisons)
    won = [
        (cmp.system_a, cmp.system_b) if cmp.outcome == 1.0 else (cmp.system_b, cmp.system_a)
        for cmp in comparisons
    ]
    reference = choix.opt_pairwise(
        len(names), [(names.index(w), names.index(lo)) for w, lo in won], alpha=0.0, tol=1e-10
    )
    reference = reference - reference[0]  # choix centres the strengths; ours are relative to s0
    exact = fit_davidson(comparisons, ridge=0.0)
    assert exact.nu is None  # no ties: plain Bradley-Terry, no tie term
    assert exact.anchor == "s0"
    assert [exact.log_strengths[s] for s in names] == pytest.approx(list(reference), abs=1e-6)
    # The default ridge moves 600 comparisons' strengths by under 1e-3.
    ridged = fit_davidson(comparisons)
    assert [ridged.log_strengths[s] for s in names] == pytest.approx(list(reference), abs=1e-3)


def test_two_systems_closed_form() -> None:
    # x beats y w = 6 times, loses l = 3, ties t = 3. The Davidson cells (pi_x, pi_y,
    # nu sqrt(pi_x pi_y)) are a saturated 3-cell multinomial, so the MLE reproduces the observed
    # shares: pi_x / pi_y = w / l = 2 and nu = t / sqrt(w l) = 3 / sqrt(18).
    outcomes = [1.0] * 6 + [0.0] * 3 + [0.5] * 3
    comparisons = [Comparison(f"p{i}", "x", "y", o, None, 10, 10) for i, o in enumerate(outcomes)]
    exact = fit_davidson(comparisons, ridge=0.0)
    assert exact.log_strengths == pytest.approx({"x": 0.0, "y": -math.log(2)}, abs=1e-9)
    assert exact.nu == pytest.approx(3 / math.sqrt(18), abs=1e-9)
    assert exact.ratings()["y"] == pytest.approx(BASE_RATING - 400 * math.log10(2), abs=1e-6)
    board = leaderboard(comparisons)
    assert [(r["system"], r["rank"], r["wins"], r["ties"], r["losses"]) for r in board["rows"]] == [
        ("x", 1, 6, 3, 3),
        ("y", 2, 3, 3, 6),
    ]
    # With the default ridge, on only 12 comparisons: within a few rating points.
    assert board["rows"][1]["rating"] == pytest.approx(BASE_RATING - 400 * math.log10(2), abs=3)
    assert board["tie_parameter"] is not None
    assert board["tie_parameter"]["value"] == pytest.approx(3 / math.sqrt(18), abs=0.01)


def test_intervals_of_two_systems_by_hand() -> None:
    # x beats y 3 times and loses once, on 4 prompts (fewer than 5: model-based, normal
    # quantile). Unpenalised, theta_y - theta_x = -log 3 and its variance is the logit's,
    # 1/3 + 1/1 (the inverse of the information w l / (w + l) = 3/4).
    comparisons = [Comparison(f"p{i}", "x", "y", o, None, 10, 10) for i, o in enumerate([1.0, 1.0, 1.0, 0.0])]
    board = leaderboard(comparisons, ridge=0.0)
    assert board["interval_method"] == INDEPENDENT and board["tie_parameter"] is None
    half = 1.959964 * math.sqrt(1 / 3 + 1)
    y = next(r for r in board["rows"] if r["system"] == "y")
    assert y["rating"] == pytest.approx(BASE_RATING - ELO_SCALE * math.log(3), abs=1e-4)
    expected = [
        BASE_RATING + ELO_SCALE * (-math.log(3) - half),
        BASE_RATING + ELO_SCALE * (-math.log(3) + half),
    ]
    assert y["ci95"] == pytest.approx(expected, abs=1e-3)
    difference = rating_difference(fit_board(comparisons, ridge=0.0), "x", "y")
    assert difference["value"] == pytest.approx(ELO_SCALE * math.log(3), abs=1e-4)
    assert difference["ci95"] == pytest.approx(
        [BASE_RATING - expected[1], BASE_RATING - expected[0]], abs=1e-3
    )


def test_clustered_intervals_use_t_and_see_prompt_effects() -> None:
    # 6 prompts; on three of them "y" wins all of its 5 comparisons with x, on three it loses
    # all 5: the comparisons of a prompt agree, so the prompt-clustered variance exceeds the
    # model-based one and the interval uses t with 5 degrees of freedom.
    outcomes = [1.0] * 5 + [0.0] * 5
    comparisons = [
        Comparison(f"p{p}", "x", "y", outcomes[(k + 5 * p) % 10], None, 1, 1)
        for p in range(6)
        for k in range(5)
    ]
    board = fit_board(comparisons, ridge=0.0)
    assert board.uncertainty.method == CLUSTERED and board.uncertainty.robust is not None
    assert board.uncertainty.quantile() == pytest.approx(2.570582, abs=1e-5)
    contrast = board.contrast(1)
    model = float(contrast @ board.uncertainty.model @ contrast)
    robust = float(contrast @ board.uncertainty.robust @ contrast)
    # By hand: each prompt's score for theta_y is (its y wins) - 5 * 1/2 = +-2.5, the
    # information 30/4, so robust = (6/5) * 6 * 2.5^2 / (30/4)^2, model = 4/30.
    assert model == pytest.approx(4 / 30, rel=1e-6)
    assert robust == pytest.approx(1.2 * 6 * 6.25 / 7.5**2, rel=1e-6)
    assert board.uncertainty.variance(contrast) == pytest.approx(robust)


def test_the_ridge_moves_a_real_run_by_little() -> None:
    """On the four-systems FairEval run of docs/results (72 comparisons, 12 prompts), the ridge
    moves every rating, nu and gamma by under a tenth of its interval's half-width."""
    path = Path(__file__).parents[2] / "docs/results/faireval_systems/verdicts.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    outcome = {"A": 1.0, "tie": 0.5, "B": 0.0}
    comparisons = [
        Comparison(str(r["prompt"]), r["system_a"], r["system_b"], outcome[r["label"]], None,
                   r["words_a"], r["words_b"])
        for r in records if r.get("label")
    ]  # fmt: skip
    for length_control in (False, True):
        ridged = leaderboard(comparisons, length_control=length_control)
        plain = leaderboard(comparisons, length_control=length_control, ridge=0.0)
        pairs = [(r, next(q for q in plain["rows"] if q["system"] == r["system"])) for r in ridged["rows"]]
        pairs += [(ridged[k], plain[k]) for k in ("tie_parameter", "length_coefficient") if ridged[k]]
        for a, b in pairs:
            value = a["rating"] if "rating" in a else a["value"]
            other = b["rating"] if "rating" in b else b["value"]
            half = (a["ci95"][1] - a["ci95"][0]) / 2
            assert abs(value - other) <= 0.1 * half or value == other


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_planted_ranking_is_recovered_with_honest_intervals() -> None:
    # 5 systems, all pairs on 60 prompts, ties common (nu = 0.4); 200 seeded repetitions. The
    # 95% intervals of the ratings (differences to the anchor s0) must cover the planted
    # ratings in at least 93% of the 800 (repetition, system) cases.
    names = list(PLANTED)
    pairs = all_pairs(names, 60)
    planted = [PLANTED[s] for s in names]
    covered = []
    taus = []
    for seed in range(200):
        comparisons = simulate_davidson(PLANTED, 0.4, pairs, np.random.default_rng(seed))
        board = leaderboard(comparisons)
        rows = {r["system"]: r for r in board["rows"]}
        assert rows["s0"]["ci95"] == [BASE_RATING, BASE_RATING]
        for name in names[1:]:
            low, high = rows[name]["ci95"]
            covered.append(low <= BASE_RATING + ELO_SCALE * PLANTED[name] <= high)
        taus.append(kendalltau(planted, [rows[s]["rating"] for s in names]).statistic)
    coverage = float(np.mean(covered))
    assert coverage >= 0.93, coverage
    assert np.mean(taus) >= 0.95
    assert min(taus) >= 0.6  # never more than two systems swapped


def test_length_control_recovers_a_planted_length_effect() -> None:
    # Equal strengths, but "long" writes twice as much and the judge favours longer answers
    # (gamma = 2): the plain board puts "long" on top, the length-controlled one does not.
    strengths = {"base": 0.0, "long": 0.0, "other": 0.0}
    pairs = all_pairs(list(strengths), 150)
    rng = np.random.default_rng(11)
    lengths = {
        (p, s): int(rng.integers(80, 120)) * (2 if s == "long" else 1) for p, *_ in pairs for s in strengths
    }
    comparisons = simulate_davidson(strengths, 0.3, pairs, rng, gamma=2.0, lengths=lengths)
    plain = leaderboard(comparisons)
    controlled = leaderboard(comparisons, length_control=True)
    assert plain["rows"][0]["system"] == "long"
    assert plain["length_coefficient"] is None and plain["length_covariate"] is None
    long_plain = next(r for r in plain["rows"] if r["system"] == "long")
    assert long_plain["ci95"][0] > BASE_RATING  # significantly above the anchor, wrongly
    gamma = controlled["length_coefficient"]
    assert gamma is not None and gamma["ci95"][0] < 2.0 < gamma["ci95"][1]
    assert (
        controlled["length_covariate"] is not None and "length_a + length_b" in controlled["length_covariate"]
    )
    long_controlled = next(r for r in controlled["rows"] if r["system"] == "long")
    assert long_controlled["ci95"][0] < BASE_RATING < long_controlled["ci95"][1]
    assert (
        long_controlled["mean_length"]
        > 1.8 * next(r for r in plain["rows"] if r["system"] == "base")["mean_length"]
    )


def test_board_fields_anchor_and_determinism() -> None:
    comparisons = simulate_davidson(PLANTED, 0.3, all_pairs(list(PLANTED), 15), np.random.default_rng(4))
    board = leaderboard(comparisons)
    assert board == leaderboard(comparisons)
    assert (board["anchor"], board["prompts"], board["comparisons"], board["interval_method"]) == (
        "s0",
        15,
        150,
        CLUSTERED,
    )
    assert board["ridge"] == RIDGE and "log10" in board["scale"]
    assert [r["rank"] for r in board["rows"]] == [1, 2, 3, 4, 5]
    ratings = [r["rating"] for r in board["rows"]]
    assert ratings == sorted(ratings, reverse=True)
    for row in board["rows"]:
        assert row["n"] == 60 and row["wins"] + row["ties"] + row["losses"] == 60
        assert row["ci95"][0] <= row["rating"] <= row["ci95"][1]
        assert row["mean_length"] == 0.0
    # Another anchor shifts every rating by the same amount (the model sees differences only).
    other = leaderboard(comparisons, anchor="s3")
    shift = {r["system"]: r["rating"] for r in other["rows"]}
    base = {r["system"]: r["rating"] for r in board["rows"]}
    assert shift["s3"] == BASE_RATING
    assert [shift[s] - base[s] for s in PLANTED] == pytest.approx([BASE_RATING - base["s3"]] * 5, abs=1e-6)


def test_a_system_that_wins_everything_stays_finite() -> None:
    comparisons = [Comparison(f"p{i}", "best", "x", 1.0, None, 5, 5) for i in range(10)]
    comparisons += [Comparison(f"p{i}", "x", "y", o, None, 5, 5) for i, o in enumerate([1.0, 0.0, 0.5] * 3)]
    board = leaderboard(comparisons, anchor="x")
    top = board["rows"][0]
    assert top["system"] == "best" and top["losses"] == 0
    assert math.isfinite(top["rating"]) and all(math.isfinite(v) for v in top["ci95"])


def test_errors() -> None:
    comparisons = [Comparison("p", "a", "b", 1.0, None, 1, 1), Comparison("p", "c", "d", 0.0, None, 1, 1)]
    with pytest.raises(ValueError, match="connected"):
        leaderboard(comparisons)
    with pytest.raises(ValueError, match="anchor"):
        leaderboard(comparisons[:1], anchor="z")


def test_simulator_draws_davidson_probabilities() -> None:
    # Equal strengths and nu = 1: win, tie and loss each 1/3. theta_a - theta_b = log 4, nu = 0:
    # A wins 4/5 of the time, never a tie.
    rng = np.random.default_rng(0)
    pairs = [(f"p{i}", "a", "b") for i in range(6000)]
    outcomes = np.array([cmp.outcome for cmp in simulate_davidson({"a": 0.0, "b": 0.0}, 1.0, pairs, rng)])
    assert [np.mean(outcomes == o) for o in (1.0, 0.5, 0.0)] == pytest.approx([1 / 3] * 3, abs=0.02)
    outcomes = np.array(
        [cmp.outcome for cmp in simulate_davidson({"a": math.log(4), "b": 0.0}, 0.0, pairs, rng)]
    )
    assert np.mean(outcomes == 1.0) == pytest.approx(0.8, abs=0.02)
    assert not np.any(outcomes == 0.5)
    assert simulate_davidson(
        {"a": 0.0, "b": 0.0}, 1.0, pairs[:5], np.random.default_rng(9)
    ) == simulate_davidson({"a": 0.0, "b": 0.0}, 1.0, pairs[:5], np.random.default_rng(9))


def test_equal_records_keep_the_listed_order() -> None:
    """Two systems with the same wins, ties and losses rank in the order they are listed, not by
    a rounding error of the fit."""
    outcomes = [1.0, 0.0] + [0.5] * 12
    comparisons = [Comparison(f"p{i}", "first", "second", o, None, 10, 10) for i, o in enumerate(outcomes)]
    for systems in (["first", "second"], ["second", "first"]):
        board = leaderboard(comparisons, systems)
        assert [row["system"] for row in board["rows"]] == systems
        assert [row["rank"] for row in board["rows"]] == [1, 1]  # equal ratings share a rank


def test_ranks_come_from_unrounded_ratings_and_equal_ones_share_a_rank() -> None:
    # FairEval's all-pairs run: two equal strengths the fit left 4e-9 points apart.
    order, ranks = shared_ranks([900.0, 1000.0, 900.000000004, 899.9996])
    assert order == [1, 0, 2, 3] and ranks == [1, 2, 2, 4]  # 0.0004 points is a difference
    assert shared_ranks([1.0, 1.0, 1.0]) == ([0, 1, 2], [1, 1, 1])


def test_what_is_resolved_is_said_in_words() -> None:
    """Planted strengths far apart on many prompts are resolved; two equal systems never are;
    a pair's resolution holds with all pairs' intervals at once."""
    planted = {"strong": 1.5, "middle_a": 0.0, "middle_b": 0.0}
    comparisons = simulate_davidson(planted, 0.4, all_pairs(list(planted), 40), np.random.default_rng(2))
    board = leaderboard(comparisons)
    assert sorted(board["resolved"]) == [["strong", "middle_a"], ["strong", "middle_b"]]
    lower = " and ".join(row["system"] for row in board["rows"][1:])  # in their ranks' order
    rule = "its interval excludes 0 with all 3 pairs' intervals holding at once, 95% jointly (Bonferroni)"
    assert resolved_sentence(board) == (
        f"resolved differences: strong above {lower}; no other difference resolved (a rating "
        f"difference counts when {rule})."
    )
    equal = simulate_davidson(
        dict.fromkeys("abc", 0.0), 0.4, all_pairs(list("abc"), 8), np.random.default_rng(3)
    )
    assert resolved_sentence(leaderboard(equal)) == (
        f"resolved differences: none (a rating difference counts when {rule})."
    )


def test_planted_ties_are_rarely_called_resolved() -> None:
    """Four equal systems, all pairs on 10 prompts, 200 repetitions: some difference is called
    resolved in at most 5% of them (the joint 95% of the Bonferroni rule)."""
    planted = dict.fromkeys(["a", "b", "c", "d"], 0.0)
    pairs = all_pairs(list(planted), 10)
    wrong = [
        bool(leaderboard(simulate_davidson(planted, 0.4, pairs, np.random.default_rng(s)))["resolved"])
        for s in range(200)
    ]
    assert np.mean(wrong) <= 0.05


def test_a_fit_stores_solver_noise_around_zero_as_zero() -> None:
    """A panel that tied every comparison has nothing to say about length: the coefficient's
    optimum is 0, and the solver's last-digit remainder (which another BLAS kernel changes) is
    stored as 0 so that every machine writes the same number; a real estimate is untouched."""
    lengths = [(182, 235), (120, 300), (250, 90), (80, 81)]
    tied = [Comparison(f"p{i}", "x", "y", 0.5, None, a, b) for i, (a, b) in enumerate(lengths * 4)]
    board = leaderboard(tied, length_control=True)
    assert board["length_coefficient"] is not None
    assert board["length_coefficient"]["value"] == 0.0
    assert [row["rating"] for row in board["rows"]] == [BASE_RATING, BASE_RATING]
    low, high = board["length_coefficient"]["ci95"]
    assert low == pytest.approx(-high) and high > 1
    # Longer answers winning: a coefficient well away from zero stays what the fit found.
    decided = [
        Comparison(f"p{i}", "x", "y", 1.0 if a > b else 0.0, None, a, b)
        for i, (a, b) in enumerate(lengths * 4)
    ]
    gamma = leaderboard(decided, length_control=True)["length_coefficient"]
    assert gamma is not None and gamma["value"] > 0.1
