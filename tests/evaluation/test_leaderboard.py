"""The Davidson-Bradley-Terry leaderboard: against choix's Bradley-Terry MLE and the closed form
of two systems, a planted ranking recovered with honest interval coverage, length control."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import kendalltau

from chateval.evaluation.comparisons import Comparison
from chateval.evaluation.davidson_fit import (
    BASE_RATING,
    ELO_SCALE,
    RIDGE,
    fit_batch,
    fit_davidson,
    prepare_fit,
)
from chateval.evaluation.davidson_simulation import simulate_davidson
from chateval.evaluation.leaderboard import leaderboard

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
    board = leaderboard(comparisons, n_resamples=50)
    assert [(r["system"], r["rank"], r["wins"], r["ties"], r["losses"]) for r in board["rows"]] == [
        ("x", 1, 6, 3, 3),
        ("y", 2, 3, 3, 6),
    ]
    # With the default ridge, on only 12 comparisons: within a few rating points.
    assert board["rows"][1]["rating"] == pytest.approx(BASE_RATING - 400 * math.log10(2), abs=3)
    assert board["tie_parameter"] is not None
    assert board["tie_parameter"]["value"] == pytest.approx(3 / math.sqrt(18), abs=0.01)


def test_bootstrap_refits_agree_with_the_scipy_fit() -> None:
    comparisons = simulate_davidson(PLANTED, 0.5, all_pairs(list(PLANTED), 20), np.random.default_rng(2))
    lengths = {(f"p{p}", s): 50 + 13 * p + 7 * i for p in range(20) for i, s in enumerate(PLANTED)}
    comparisons = [
        Comparison(cmp.prompt, cmp.system_a, cmp.system_b, cmp.outcome, None,
                   lengths[cmp.prompt, cmp.system_a], lengths[cmp.prompt, cmp.system_b])
        for cmp in comparisons
    ]  # fmt: skip
    for length_control in (False, True):
        fit = fit_davidson(comparisons, length_control=length_control)
        _, _, design = prepare_fit(comparisons, None, None, length_control)
        # The vectorised Newton refit, started far from the optimum, on the full data (twice).
        weights = np.tile(design.weights.sum(axis=0), (2, 1))
        params = fit_batch(design, weights, np.full(design.size, 0.3), RIDGE)
        expected = [fit.log_strengths[s] for s in PLANTED if s != "s0"] + [math.log(fit.nu or 1.0)]
        if length_control:
            expected.append(fit.gamma or 0.0)
        assert params[0] == pytest.approx(expected, abs=1e-7)
        assert params[1] == pytest.approx(expected, abs=1e-7)


def test_planted_ranking_is_recovered_with_honest_intervals() -> None:
    # 5 systems, all pairs on 60 prompts, ties common (nu = 0.4); 200 seeded repetitions with
    # 200 resamples each. The 95% intervals of the ratings (differences to the anchor s0)
    # must cover the planted ratings in at least 90% of the 800 (repetition, system) cases.
    names = list(PLANTED)
    pairs = all_pairs(names, 60)
    planted = [PLANTED[s] for s in names]
    covered = []
    taus = []
    for seed in range(200):
        comparisons = simulate_davidson(PLANTED, 0.4, pairs, np.random.default_rng(seed))
        board = leaderboard(comparisons, n_resamples=200, seed=seed)
        rows = {r["system"]: r for r in board["rows"]}
        assert rows["s0"]["ci95"] == [BASE_RATING, BASE_RATING]
        for name in names[1:]:
            low, high = rows[name]["ci95"]
            covered.append(low <= BASE_RATING + ELO_SCALE * PLANTED[name] <= high)
        taus.append(kendalltau(planted, [rows[s]["rating"] for s in names]).statistic)
    coverage = float(np.mean(covered))
    assert coverage >= 0.90, coverage
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
    plain = leaderboard(comparisons, n_resamples=200)
    controlled = leaderboard(comparisons, length_control=True, n_resamples=200)
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
    board = leaderboard(comparisons, n_resamples=100, seed=3)
    assert board == leaderboard(comparisons, n_resamples=100, seed=3)
    assert (board["anchor"], board["prompts"], board["comparisons"], board["resamples"]) == (
        "s0",
        15,
        150,
        100,
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
    other = leaderboard(comparisons, anchor="s3", n_resamples=100, seed=3)
    shift = {r["system"]: r["rating"] for r in other["rows"]}
    base = {r["system"]: r["rating"] for r in board["rows"]}
    assert shift["s3"] == BASE_RATING
    assert [shift[s] - base[s] for s in PLANTED] == pytest.approx([BASE_RATING - base["s3"]] * 5, abs=1e-6)


def test_a_system_that_wins_everything_stays_finite() -> None:
    comparisons = [Comparison(f"p{i}", "best", "x", 1.0, None, 5, 5) for i in range(10)]
    comparisons += [Comparison(f"p{i}", "x", "y", o, None, 5, 5) for i, o in enumerate([1.0, 0.0, 0.5] * 3)]
    board = leaderboard(comparisons, anchor="x", n_resamples=100)
    top = board["rows"][0]
    assert top["system"] == "best" and top["losses"] == 0
    assert math.isfinite(top["rating"]) and all(math.isfinite(v) for v in top["ci95"])


def test_errors() -> None:
    comparisons = [Comparison("p", "a", "b", 1.0, None, 1, 1), Comparison("p", "c", "d", 0.0, None, 1, 1)]
    with pytest.raises(ValueError, match="connected"):
        leaderboard(comparisons)
    with pytest.raises(ValueError, match="anchor"):
        leaderboard(comparisons[:1], anchor="z")
    with pytest.raises(ValueError, match="ridge"):
        leaderboard(comparisons[:1], ridge=0.0)


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
        board = leaderboard(comparisons, systems, n_resamples=20)
        assert [row["system"] for row in board["rows"]] == systems
