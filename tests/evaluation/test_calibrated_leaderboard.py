"""The calibrated leaderboard: a seeded run with planted strengths and a biased panel, the field
win rates as hand-built PPI means, the best-system rule, and too few labels."""

import dataclasses
import itertools
import math

import numpy as np
import pytest

from chateval.evaluation.systems.calibrated_leaderboard import (
    MIN_LABELLED_OVERALL,
    best_system,
    calibrated_leaderboard,
)
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.schema.calibrated import CalibratedLeaderboard, CalibratedRow

SYSTEMS = ("s0", "s1", "s2", "s3")
STRENGTHS = (0.0, 0.7, 1.4, 2.1)  # log-strengths the humans follow; s0 is the anchor
PLANTED = {s: 1000 + 400 / math.log(10) * v for s, v in zip(SYSTEMS, STRENGTHS, strict=True)}
FAVOURED = 1.5  # the panel adds this to s0's log-odds, and 0.5 to position A's


def _planted_run(
    seed: int = 11, prompts: int = 120, share: float = 0.3
) -> tuple[list[Comparison], list[float | None]]:
    """Every pair of systems on every prompt, positions drawn at random; the human and the panel
    draw from one uniform per comparison (so the panel predicts the humans, with its bias), and
    a random share of the comparisons is labelled."""
    rng = np.random.default_rng(seed)
    comparisons: list[Comparison] = []
    human: list[float | None] = []
    for prompt in range(prompts):
        for i in range(4):
            for j in range(i + 1, 4):
                a, b = (i, j) if rng.random() < 0.5 else (j, i)
                true = STRENGTHS[a] - STRENGTHS[b]
                panel = true + 0.5 + FAVOURED * ((a == 0) - (b == 0))
                u = rng.random()
                outcome = float(u < 1 / (1 + math.exp(-panel)))
                comparisons.append(Comparison(f"p{prompt}", SYSTEMS[a], SYSTEMS[b], outcome, None, 10, 10))
                truth = float(u < 1 / (1 + math.exp(-true)))
                human.append(truth if rng.random() < share else None)
    return comparisons, human


@pytest.fixture(scope="module")
def planted() -> tuple[list[Comparison], list[float | None], CalibratedLeaderboard]:
    comparisons, human = _planted_run()
    return comparisons, human, calibrated_leaderboard(comparisons, human, anchor="s0", soft=False)


def test_calibrated_ratings_recover_the_planted_strengths(
    planted: tuple[list[Comparison], list[float | None], CalibratedLeaderboard],
) -> None:
    comparisons, human, board = planted
    rows = {row["system"]: row for row in board["rows"]}
    assert [row["system"] for row in board["rows"]] == ["s3", "s2", "s1", "s0"]
    assert board["labelled"] == sum(h is not None for h in human) and board["comparisons"] == len(comparisons)
    assert rows["s0"]["rating"] == rows["s0"]["ci95"][0] == rows["s0"]["ci95"][1] == 1000
    assert 0 < board["lam"] <= 1 and board["predictions"] == "hard"
    for system in SYSTEMS[1:]:
        low, high = rows[system]["ci95"]
        assert low <= PLANTED[system] <= high, system
        # The panel alone, favouring the anchor, pulls every other rating down past the truth.
        panel_low, panel_high = rows[system]["panel_ci95"]
        assert panel_high < PLANTED[system], system
    assert board["best"]["system"] == "s3"
    assert board["best"]["resolved"] or board["best"]["runner_up"] == "s2"


def test_field_win_rates_are_ppi_means_from_each_systems_side(
    planted: tuple[list[Comparison], list[float | None], CalibratedLeaderboard],
) -> None:
    comparisons, human, board = planted
    for row in board["rows"]:
        system = row["system"]
        y, yhat, yhat_u = [], [], []
        for c, h in zip(comparisons, human, strict=True):
            if system not in (c.system_a, c.system_b):
                continue
            mine = c.outcome if c.system_a == system else 1 - c.outcome
            if h is None:
                yhat_u.append(mine)
            else:
                y.append(h if c.system_a == system else 1 - h)
                yhat.append(mine)
        expected = ppi_mean(y, yhat, yhat_u, bounds=(0.0, 1.0))  # a win rate lies in [0, 1]
        field = row["field"]
        assert field is not None and field.keys() == expected.keys()
        for key, value in expected.items():
            assert field[key] == pytest.approx(value, abs=1e-12), key  # type: ignore[literal-required]
        assert (row["labelled"], row["comparisons"]) == (len(y), len(y) + len(yhat_u))


def test_soft_predictions_are_used_when_every_comparison_has_one() -> None:
    comparisons, human = _planted_run(prompts=20)
    softened = [
        Comparison(c.prompt, c.system_a, c.system_b, c.outcome, 0.25 + c.outcome / 2, 10, 10)
        for c in comparisons
    ]
    assert calibrated_leaderboard(softened, human, anchor="s0", soft=True)["predictions"] == "soft"
    assert calibrated_leaderboard(softened, human, anchor="s0", soft=False)["predictions"] == "hard"
    partly = [comparisons[0], *softened[1:]]  # one comparison without a soft value: hard for all
    assert calibrated_leaderboard(partly, human, anchor="s0", soft=True)["predictions"] == "hard"


def test_a_comparison_the_panel_did_not_decide_is_a_tie_and_keeps_its_label() -> None:
    """Issue 64: undecided comparisons stay in, labels and all, the panel's prediction a tie
    (0.5) whatever the comparison's outcome or soft value says; a tie's prediction is soft-free,
    so a soft board stays soft."""
    comparisons, human = _planted_run(prompts=40)
    undecided = [k % 3 == 0 for k in range(len(comparisons))]
    board = calibrated_leaderboard(comparisons, human, anchor="s0", soft=False, undecided=undecided)
    as_ties = [
        dataclasses.replace(c, outcome=0.5) if skip else c
        for c, skip in zip(comparisons, undecided, strict=True)
    ]
    tied = calibrated_leaderboard(as_ties, human, anchor="s0", soft=False)
    assert [r["rating"] for r in board["rows"]] == pytest.approx(
        [r["rating"] for r in tied["rows"]], abs=1e-9
    )
    assert board["labelled"] == sum(h is not None for h in human) and board["comparisons"] == len(comparisons)
    assert board["undecided"] == sum(undecided)
    assert board["undecided_labelled"] == sum(
        skip and h is not None for skip, h in zip(undecided, human, strict=True)
    )
    # The outcome an undecided comparison carries is not read: another one gives the same board.
    flipped = [
        dataclasses.replace(c, outcome=1 - c.outcome) if skip else c
        for c, skip in zip(comparisons, undecided, strict=True)
    ]
    again = calibrated_leaderboard(flipped, human, anchor="s0", soft=False, undecided=undecided)
    assert [r["rating"] for r in again["rows"]] == pytest.approx(
        [r["rating"] for r in board["rows"]], abs=1e-9
    )
    softened = [
        dataclasses.replace(c, soft=None if skip else 0.25 + c.outcome / 2)
        for c, skip in zip(comparisons, undecided, strict=True)
    ]
    assert (
        calibrated_leaderboard(softened, human, anchor="s0", soft=True, undecided=undecided)["predictions"]
        == "soft"
    )


def test_too_few_labels_give_no_leaderboard_with_the_reason() -> None:
    comparisons, _ = _planted_run(prompts=5)
    human: list[float | None] = [None] * len(comparisons)
    for k in range(MIN_LABELLED_OVERALL - 1):
        human[k] = comparisons[k].outcome
    with pytest.raises(ValueError, match=f"9 labelled comparisons; at least {MIN_LABELLED_OVERALL} needed"):
        calibrated_leaderboard(comparisons, human, anchor="s0", soft=False)


def test_every_comparison_labelled_gives_the_labels_own_leaderboard() -> None:
    """Was refused ("every comparison is labelled"): the labels alone are then the estimate."""
    comparisons, _ = _planted_run(prompts=5)
    outcomes = [c.outcome for c in comparisons]
    board = calibrated_leaderboard(comparisons, outcomes, anchor="s0", soft=False)
    assert board["labels_only"] and board["lam"] == 0.0
    assert all(row["field"] is None for row in board["rows"]) and board["best_field"] is None
    # The panel takes no part: another panel gives the same ratings.
    flipped = [dataclasses.replace(c, outcome=1 - c.outcome) for c in comparisons]
    again = calibrated_leaderboard(flipped, outcomes, anchor="s0", soft=False)
    assert [r["rating"] for r in again["rows"]] == [r["rating"] for r in board["rows"]]


def test_a_system_that_lost_every_labelled_comparison_is_bounded_and_named() -> None:
    """Was "a system won or lost every comparison: its rating is unbounded", the system
    unnamed. Three systems, ten labels, one of them losing all of its own."""
    systems = ["a", "b", "c"]
    comparisons = [
        Comparison(
            f"p{p}", first, second, 0.5 if "c" not in (first, second) else float(first != "c"), None, 0, 0
        )
        for p in range(10)
        for first, second in itertools.combinations(systems, 2)
    ]
    human: list[float | None] = [c.outcome if k < 12 else None for k, c in enumerate(comparisons)]
    board = calibrated_leaderboard(comparisons, human, anchor="a", soft=False)
    assert board["one_sided"] == ["c"]
    rows = {r["system"]: r for r in board["rows"]}
    assert rows["c"]["rank"] == 3 and np.isfinite(rows["c"]["rating"]) and rows["c"]["rating"] < 1000
    low, high = rows["c"]["ci95"]
    assert np.isfinite(low) and low < rows["c"]["rating"] < high


def test_a_group_that_beat_the_rest_in_every_label_is_named() -> None:
    """Four systems: a and b trade wins, c and d trade wins, and a and b beat c and d in every
    labelled comparison. No single system is one-sided, but how far {a, b} lies above {c, d}
    rests on the prior: the group is named, with the side it is on."""
    systems = ["a", "b", "c", "d"]

    def outcome(prompt: int, first: str, second: str) -> float:
        if {first, second} in ({"a", "b"}, {"c", "d"}):
            return float(prompt % 2)  # the pair trades wins prompt by prompt
        return float(first in ("a", "b"))

    comparisons = [
        Comparison(f"p{p}", first, second, outcome(p, first, second), None, 0, 0)
        for p in range(6)
        for first, second in itertools.combinations(systems, 2)
    ]
    human: list[float | None] = [c.outcome if k < 24 else None for k, c in enumerate(comparisons)]
    board = calibrated_leaderboard(comparisons, human, anchor="a", soft=False)
    assert board["one_sided"] == []
    assert board["one_sided_groups"] == [
        {"systems": ["a", "b"], "side": "won"},
        {"systems": ["c", "d"], "side": "lost"},
    ] or board["one_sided_groups"] == [
        {"systems": ["c", "d"], "side": "lost"},
        {"systems": ["a", "b"], "side": "won"},
    ]
    # One labelled win of c over a joins the graph both ways: nothing is one-sided any more.
    human[comparisons.index(next(c for c in comparisons if (c.system_a, c.system_b) == ("a", "c")))] = 0.0
    assert calibrated_leaderboard(comparisons, human, anchor="a", soft=False)["one_sided_groups"] == []


def test_a_system_without_labels_of_its_own_is_named() -> None:
    comparisons, _ = _planted_run(prompts=10)
    human: list[float | None] = [
        c.outcome if "s3" not in (c.system_a, c.system_b) else None for c in comparisons
    ]
    with pytest.raises(ValueError, match="s3 has 0 labelled comparisons"):
        calibrated_leaderboard(comparisons, human, anchor="s0", soft=False)


def _row(system: str, rating: float, low: float, high: float) -> CalibratedRow:
    return {
        "rank": 0,
        "system": system,
        "rating": rating,
        "ci95": [low, high],
        "panel_rating": rating,
        "panel_ci95": [low, high],
        "labelled": 0,
        "comparisons": 0,
        "field": None,
    }


def test_the_best_system_is_resolved_only_without_overlap() -> None:
    def rating(row: CalibratedRow) -> tuple[float, list[float]]:
        return row["rating"], row["ci95"]

    apart = [_row("a", 1000, 1000, 1000), _row("b", 1100, 1050, 1150), _row("c", 1300, 1200, 1400)]
    assert best_system(apart, rating) == {"system": "c", "resolved": True, "runner_up": None}
    close = [_row("a", 1000, 1000, 1000), _row("b", 1150, 1050, 1210), _row("c", 1300, 1200, 1400)]
    assert best_system(close, rating) == {"system": "c", "resolved": False, "runner_up": "b"}
