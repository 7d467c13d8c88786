"""The test of a labelled slice's randomness across pairs: its p-value against an exact sum and
the chi-square limit, a slice confined to one system's comparisons refused with the pairs named,
a milder one flagged with its pair named, and random slices seldom flagged (seeded, not timed)."""

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chi2, multivariate_hypergeom

from chateval.evaluation.systems.calibrated_leaderboard import calibrated_leaderboard
from chateval.evaluation.systems.comparisons import Comparison
from chateval.evaluation.systems.label_slice import DRAWS, FLAG_P, REFUSE_P, label_slice, slice_text
from chateval.schema.calibrated import CalibratedLeaderboard

SYSTEMS = ["a", "b", "c", "d"]


def _design(prompts: int, systems: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of systems on every prompt: the comparisons' system indexes."""
    pairs = [pair for _ in range(prompts) for pair in itertools.combinations(range(systems), 2)]
    return np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])


def _slice(a: np.ndarray, b: np.ndarray, per_pair: dict[tuple[int, int], int]) -> np.ndarray:
    """The first ``per_pair[pair]`` comparisons of each pair labelled."""
    labelled = np.zeros(len(a), dtype=bool)
    seen: dict[tuple[int, int], int] = {}
    for k, pair in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        seen[pair] = seen.get(pair, 0) + 1
        labelled[k] = seen[pair] <= per_pair[pair]
    return labelled


def test_the_p_value_is_the_exact_tail_of_the_hypergeometric_counts() -> None:
    """Three pairs of 4 comparisons, 5 labels (4, 1, 0): the exact p sums the probabilities of
    every labelled-count vector whose chi-square is at least the slice's."""
    a, b = np.array([0] * 4 + [0] * 4 + [1] * 4), np.array([1] * 4 + [2] * 4 + [2] * 4)
    labelled = np.array([1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
    found = label_slice(["x", "y", "z"], a, b, labelled)

    def statistic(counts: tuple[int, ...]) -> float:
        expected = 4 * 5 / 12
        return sum((c - expected) ** 2 / 4 for c in counts) * 12**2 / (5 * 7)

    tables = [c for c in itertools.product(range(5), repeat=3) if sum(c) == 5]
    law = multivariate_hypergeom(m=[4, 4, 4], n=5)
    exact = sum(law.pmf(c) for c in tables if statistic(c) >= statistic((4, 1, 0)) - 1e-12)
    assert found["chi_square"] == pytest.approx(statistic((4, 1, 0)))
    # Monte Carlo over DRAWS: within 4 of its standard errors.
    assert found["p_value"] == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / DRAWS))
    assert found["pairs"] == 3 and found["draws"] == DRAWS


def test_with_many_labels_the_p_value_is_the_chi_square_limit() -> None:
    a, b = _design(200)
    labelled = _slice(a, b, {(0, 1): 60, (0, 2): 50, (0, 3): 50, (1, 2): 45, (1, 3): 50, (2, 3): 40})
    found = label_slice(SYSTEMS, a, b, labelled)
    limit = float(chi2.sf(found["chi_square"], df=5))
    assert 0.01 < limit < 0.5  # a case between the extremes
    assert found["p_value"] == pytest.approx(limit, abs=0.015)


def test_an_even_slice_is_not_flagged_and_names_no_pair() -> None:
    a, b = _design(40)
    found = label_slice(SYSTEMS, a, b, _slice(a, b, dict.fromkeys(itertools.combinations(range(4), 2), 10)))
    assert found["random"] and found["uneven"] == [] and found["p_value"] == pytest.approx(1.0)


def _comparisons(prompts: int, seed: int = 3) -> list[Comparison]:
    """Every pair of four systems on every prompt, the panel's decisions at random."""
    rng = np.random.default_rng(seed)
    return [
        Comparison(f"p{p}", SYSTEMS[i], SYSTEMS[j], float(rng.choice([0.0, 0.5, 1.0])), None, 5, 5)
        for p in range(prompts)
        for i, j in itertools.combinations(range(4), 2)
    ]


def test_labels_on_one_systems_comparisons_only_are_refused_with_the_pairs_named() -> None:
    """The issue's case: every labelled comparison involves a (a third of a's, none of the
    others'). Each system has labels of its own, so nothing else refused it."""
    comparisons = _comparisons(40)
    rng = np.random.default_rng(8)
    human = [
        c.outcome if "a" in (c.system_a, c.system_b) and rng.random() < 1 / 3 else None for c in comparisons
    ]
    with pytest.raises(ValueError, match="not a random slice") as refused:
        calibrated_leaderboard(comparisons, human, anchor="a", soft=False)
    said = str(refused.value)
    for pair in ("b vs c: 0 of 40 labelled", "b vs d: 0 of 40 labelled", "c vs d: 0 of 40 labelled"):
        assert pair in said
    assert "p < 0.001" in said


def uneven_board() -> CalibratedLeaderboard:
    """A calibrated leaderboard on 16 labels of each pair but c vs d's 4: uneven (p about
    0.02), though not beyond doubt."""
    comparisons = _comparisons(40)
    seen: dict[tuple[str, str], int] = {}
    human: list[float | None] = []
    for c in comparisons:
        pair = (c.system_a, c.system_b)
        seen[pair] = seen.get(pair, 0) + 1
        human.append(c.outcome if seen[pair] <= (4 if pair == ("c", "d") else 16) else None)
    return calibrated_leaderboard(comparisons, human, anchor="a", soft=False)


def test_an_uneven_slice_is_flagged_with_the_pair_named() -> None:
    found = uneven_board()["label_slice"]
    assert REFUSE_P <= found["p_value"] < FLAG_P and not found["random"]
    assert found["uneven"] == [
        {"system_a": "c", "system_b": "d", "labelled": 4, "comparisons": 40, "expected": pytest.approx(14.0)}
    ]
    assert "c vs d: 4 of 40 labelled, 14.0 expected" in slice_text(found)


@pytest.mark.parametrize("draw", ["share", "count"])
def test_random_slices_are_seldom_flagged_and_almost_never_refused(draw: str) -> None:
    """The false-alarm rate on random slices, as the simulation draws them (a seeded share of
    each comparison, or a fixed number of them), 4 systems x 40 prompts: about 5% at most
    flagged; and the test is not mute (some are)."""
    a, b = _design(40)
    rng = np.random.default_rng([5, len(draw)])
    slices = 250
    flagged = refused = 0
    for _ in range(slices):
        if draw == "share":
            labelled = rng.random(len(a)) < 0.25
        else:
            labelled = np.zeros(len(a), dtype=bool)
            labelled[rng.choice(len(a), 40, replace=False)] = True
        found = label_slice(SYSTEMS, a, b, labelled)
        flagged += not found["random"]
        refused += found["p_value"] < REFUSE_P
    assert 0.01 <= flagged / slices <= 0.08, flagged
    assert refused <= 1
