"""A leaderboard of systems from the panel's pairwise decisions: Bradley-Terry strengths with
ties modelled explicitly (Davidson 1970), on an Elo-like scale, with 95% intervals; and the same
model with the answers' length difference as a covariate (a length-controlled leaderboard, as
Chatbot Arena's style control).

The model and its fit are ``davidson_model`` and ``davidson_fit``; the intervals are
``davidson_intervals``' (prompt-clustered with t quantiles from 5 prompts on, model-based below
that, and ``interval_method`` says which); this module builds the table: the ratings with their
intervals, each system's record and mean answer length. The anchor's interval is [1000, 1000]:
the ratings are differences to it. ``rating_difference`` gives the interval of the difference of
two ratings, which is what tells whether two systems are told apart (two overlapping rating
intervals can still hold a difference that excludes 0, and the anchor's has no width at all).
``resolved_pairs`` lists the differences told apart with all pairs' intervals holding at once,
95% jointly; a run with the adaptive design passes its share of the design's 5% instead
(``adaptive_design.LOOK_ALPHA``: the final board is one of the looks its stop's error is split
over), so that no "resolved" an adaptive run shows lies outside that split.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from chateval.evaluation.settings import RESOLVED_ALPHA
from chateval.evaluation.systems.comparisons import Comparison, ComparisonArrays, Sides, each_side, tallies
from chateval.evaluation.systems.davidson_fit import (
    BASE_RATING,
    ELO_SCALE,
    RIDGE,
    fit_point,
    log_strengths,
    prepare_fit,
)
from chateval.evaluation.systems.davidson_intervals import ParameterUncertainty, parameter_uncertainty
from chateval.evaluation.systems.davidson_model import LENGTH_COVARIATE, Design
from chateval.schema.agreement import Interval
from chateval.schema.systems import Leaderboard, LeaderboardRow

# Ratings closer than this (rating points) are equal: the fit's own precision (a symmetric
# record can leave two equal strengths a few 1e-9 points apart).
RATING_TOLERANCE = 1e-6


@dataclass(frozen=True)
class FittedBoard:
    """A fitted Davidson model with its parameters' uncertainty: what the table is made of, and
    what the adaptive design asks which systems are told apart."""

    arrays: ComparisonArrays
    anchor: int  # the anchor's position in ``arrays.systems``
    design: Design
    params: np.ndarray
    uncertainty: ParameterUncertainty

    def log_strengths(self) -> np.ndarray:
        """Each system's log-strength, the anchor's 0."""
        return log_strengths(self.design, self.params)

    def contrast(self, first: int, second: int | None = None) -> np.ndarray:
        """The parameter contrast of theta_first (minus theta_second)."""
        out = np.zeros(self.design.size + 1)  # the last column is the anchor's dummy
        out[self.design.theta_column[first]] += 1.0
        if second is not None:
            out[self.design.theta_column[second]] -= 1.0
        return out[:-1]

    def interval(self, value: float, contrast: np.ndarray, scale: float = 1.0) -> list[float]:
        """The 95% interval of ``value`` (= contrast @ params) on ``scale``."""
        half = self.uncertainty.half_width(contrast)
        return [scale * (value - half), scale * (value + half)]

    def told_apart(self, first: int, second: int, tests: int = 1, alpha: float = 0.05) -> bool:
        """Whether the interval of theta_first - theta_second excludes 0 (one of ``tests``
        intervals holding jointly at ``alpha``, ``half_width``'s Bonferroni split)."""
        theta = self.log_strengths()
        difference = float(theta[first] - theta[second])
        return abs(difference) > self.uncertainty.half_width(self.contrast(first, second), tests, alpha)


def fit_board(
    comparisons: Sequence[Comparison],
    systems: Sequence[str] | None = None,
    anchor: str | None = None,
    length_control: bool = False,
    ridge: float = RIDGE,
) -> FittedBoard:
    """Fit the Davidson model and its parameters' covariances (``davidson_intervals``)."""
    arrays, index, design = prepare_fit(comparisons, systems, anchor, length_control)
    params, _ = fit_point(design, design.weights.sum(axis=0), ridge)
    return FittedBoard(arrays, index, design, params, parameter_uncertainty(design, params, ridge))


def rating_difference(board: FittedBoard, first: str, second: str) -> Interval:
    """The rating of ``first`` minus that of ``second``, in rating points, with its interval."""
    names = board.arrays.systems
    i, j = names.index(first), names.index(second)
    theta = board.log_strengths()
    value = float(theta[i] - theta[j])
    return {"value": ELO_SCALE * value, "ci95": board.interval(value, board.contrast(i, j), ELO_SCALE)}


def shared_ranks(ratings: Sequence[float]) -> tuple[list[int], list[int]]:
    """The order of ``ratings`` (positions, highest first) and each position's rank in it:
    ratings within ``RATING_TOLERANCE`` of their group's highest are equal, share the rank of
    the first of them (1, 2, 2, 4) and keep their listed order. Ranks come from the unrounded
    ratings."""
    by_rating = sorted(range(len(ratings)), key=lambda i: -ratings[i])
    groups: list[list[int]] = []
    for i in by_rating:
        if groups and ratings[groups[-1][0]] - ratings[i] <= RATING_TOLERANCE:
            groups[-1].append(i)
        else:
            groups.append([i])
    order: list[int] = []
    ranks: list[int] = []
    for group in groups:
        rank = len(order) + 1
        for i in sorted(group):
            order.append(i)
            ranks.append(rank)
    return order, ranks


def resolved_pairs(
    board: FittedBoard, order: Sequence[int], ranks: Sequence[int], alpha: float = RESOLVED_ALPHA
) -> list[list[str]]:
    """[higher, lower] for each pair of differently ranked systems whose rating difference's
    interval excludes 0 when the intervals of all K (K - 1) / 2 pairs hold together
    (Bonferroni: each at 1 - alpha / pairs), so that "a above b" is a claim the data support
    whichever pairs a reader looks at."""
    names = board.arrays.systems
    tests = len(order) * (len(order) - 1) // 2
    return [
        [names[i], names[order[y]]]
        for x, i in enumerate(order)
        for y in range(x + 1, len(order))
        # ``order`` is highest first: a pair of different ranks is told apart in that direction
        if ranks[y] != ranks[x] and board.told_apart(i, order[y], tests, alpha)
    ]


def leaderboard(
    comparisons: Sequence[Comparison],
    systems: Sequence[str] | None = None,
    anchor: str | None = None,
    length_control: bool = False,
    ridge: float = RIDGE,
    resolved_alpha: float = RESOLVED_ALPHA,
) -> Leaderboard:
    """Rank the systems by their Davidson-Bradley-Terry rating, with 95% intervals (see the
    module doc); ``length_control`` fits the length covariate too and reports its coefficient
    gamma; ``resolved_alpha`` is the joint error of the ``resolved`` pairs. Deterministic."""
    board = fit_board(comparisons, systems, anchor, length_control, ridge)
    arrays, design, params = board.arrays, board.design, board.params
    theta = board.log_strengths()
    intervals: list[Interval] = []
    for i, value in enumerate(theta):
        rating = BASE_RATING + ELO_SCALE * float(value)
        if i == board.anchor:  # the scale's origin: no uncertainty by definition
            intervals.append({"value": rating, "ci95": [rating, rating]})
            continue
        low, high = board.interval(float(value), board.contrast(i), ELO_SCALE)
        intervals.append({"value": rating, "ci95": [BASE_RATING + low, BASE_RATING + high]})

    n_systems = len(arrays.systems)
    sides = each_side(arrays)
    n, wins, ties = tallies(sides.system, sides.score, n_systems)
    lengths = _mean_lengths(arrays, sides)
    order, ranks = shared_ranks([row["value"] for row in intervals])
    rows: list[LeaderboardRow] = [
        {
            "rank": rank,
            "system": arrays.systems[i],
            "rating": intervals[i]["value"],
            "ci95": intervals[i]["ci95"],
            "n": int(n[i]),
            "wins": int(wins[i]),
            "ties": int(ties[i]),
            "losses": int(n[i] - wins[i] - ties[i]),
            "mean_length": lengths[i],
        }
        for rank, i in zip(ranks, order, strict=True)
    ]
    tie_parameter: Interval | None = None
    gamma: Interval | None = None
    if design.tie_column is not None:
        log_nu = float(params[design.tie_column])
        low, high = board.interval(log_nu, _unit(design, design.tie_column))
        tie_parameter = {"value": float(np.exp(log_nu)), "ci95": [float(np.exp(low)), float(np.exp(high))]}
    if design.gamma_column is not None:
        value = float(params[design.gamma_column])
        gamma = {"value": value, "ci95": board.interval(value, _unit(design, design.gamma_column))}
    return {
        "anchor": arrays.systems[board.anchor],
        "scale": f"{BASE_RATING:g} + 400 log10(strength / strength of {arrays.systems[board.anchor]})",
        "length_control": length_control,
        "length_covariate": LENGTH_COVARIATE if length_control else None,
        "length_coefficient": gamma,
        "tie_parameter": tie_parameter,
        "rows": rows,
        "prompts": len(arrays.prompts),
        "comparisons": len(comparisons),
        "ridge": ridge,
        "interval_method": board.uncertainty.method,
        "resolved": resolved_pairs(board, order, ranks, resolved_alpha),
        "resolved_alpha": resolved_alpha,
    }


def _unit(design: Design, column: int) -> np.ndarray:
    out = np.zeros(design.size)
    out[column] = 1.0
    return out


def _mean_lengths(arrays: ComparisonArrays, sides: Sides) -> list[float]:
    """Each system's mean answer length over its distinct prompts (an answer compared several
    times on one prompt counts once, so systems that meet more opponents are not weighted by it)."""
    n_prompts = len(arrays.prompts)
    answer = sides.system * n_prompts + sides.prompt
    keys, inverse = np.unique(answer, return_inverse=True)
    per_answer = np.bincount(inverse, weights=sides.length) / np.bincount(inverse)
    system = keys // n_prompts
    totals = np.bincount(system, weights=per_answer, minlength=len(arrays.systems))
    means = totals / np.bincount(system, minlength=len(arrays.systems))
    return [float(v) for v in means]
