"""The panel's decisions between two systems' answers, the input of the win rates, the length bias
and the leaderboard: one ``Comparison`` per decision, indexed into arrays, and the wins, ties and
losses they add up to.

A ``Comparison`` is one panel decision (both answer orders already combined into one hard
decision, and a soft probability where the run has one). ``comparison_arrays`` turns a list of
them into index and value arrays (systems and prompts as positions), the form every statistic
of them is computed on.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

OUTCOMES = (0.0, 0.5, 1.0)  # B won, tie, A won


@dataclass(frozen=True)
class Comparison:
    """One panel decision between the answers of two systems to one prompt.

    ``outcome`` is the panel's hard decision over both answer orders: 1.0 when A won, 0.5 for a
    tie, 0.0 when B won. ``soft`` is the panel's probability that A is better (ties counted
    half), None when the run has no soft verdicts. ``prompt`` is the cluster of every
    interval (resampled, or the win rates' design effect); lengths are the answers' lengths in words.
    """

    prompt: str
    system_a: str
    system_b: str
    outcome: float
    soft: float | None
    length_a: int
    length_b: int

    def __post_init__(self) -> None:
        # A bad record caught here is one clear error, not a silently skewed statistic later.
        if self.outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {self.outcome!r}")
        if self.soft is not None and not 0.0 <= self.soft <= 1.0:
            raise ValueError(f"soft must lie in [0, 1], got {self.soft!r}")
        if self.system_a == self.system_b:
            raise ValueError(f"a comparison needs two systems, got {self.system_a!r} twice")
        if self.length_a < 0 or self.length_b < 0:
            raise ValueError("answer lengths must be >= 0")


def panel_predictions(comparisons: Sequence[Comparison], soft: bool) -> tuple[list[float], bool]:
    """The panel's prediction of each comparison's outcome for a calibrated estimate: its soft
    probability when ``soft`` and every comparison has one, else its hard decision; and whether
    the soft ones were used."""
    use_soft = soft and all(c.soft is not None for c in comparisons)
    return [c.soft if use_soft and c.soft is not None else c.outcome for c in comparisons], use_soft


@dataclass(frozen=True)
class ComparisonArrays:
    """Comparisons as index and value arrays (systems and prompts as positions in
    ``systems`` and ``prompts``); ``soft`` is NaN where a comparison has none."""

    systems: tuple[str, ...]
    prompts: tuple[str, ...]
    prompt: np.ndarray
    a: np.ndarray
    b: np.ndarray
    outcome: np.ndarray
    soft: np.ndarray
    length_a: np.ndarray
    length_b: np.ndarray


def comparison_arrays(
    comparisons: Sequence[Comparison], systems: Sequence[str] | None = None
) -> ComparisonArrays:
    """Index the comparisons. ``systems`` fixes the order of the systems (every system of the
    comparisons must be in it, and each of it must appear); by default, order of first
    appearance. Prompts are in order of first appearance."""
    if not comparisons:
        raise ValueError("no comparisons")
    seen = list(dict.fromkeys(name for c in comparisons for name in (c.system_a, c.system_b)))
    if systems is None:
        order = seen
    else:
        order = list(dict.fromkeys(systems))
        unknown = sorted(set(seen) - set(order))
        missing = sorted(set(order) - set(seen))
        if unknown:
            raise ValueError(f"systems not in the given list: {', '.join(unknown)}")
        if missing:
            raise ValueError(f"systems without any comparison: {', '.join(missing)}")
    position = {name: i for i, name in enumerate(order)}
    prompts = list(dict.fromkeys(c.prompt for c in comparisons))
    prompt_position = {p: i for i, p in enumerate(prompts)}
    return ComparisonArrays(
        systems=tuple(order),
        prompts=tuple(prompts),
        prompt=np.array([prompt_position[c.prompt] for c in comparisons], dtype=np.int64),
        a=np.array([position[c.system_a] for c in comparisons], dtype=np.int64),
        b=np.array([position[c.system_b] for c in comparisons], dtype=np.int64),
        outcome=np.array([c.outcome for c in comparisons], dtype=float),
        soft=np.array([math.nan if c.soft is None else c.soft for c in comparisons], dtype=float),
        length_a=np.array([c.length_a for c in comparisons], dtype=float),
        length_b=np.array([c.length_b for c in comparisons], dtype=float),
    )


@dataclass(frozen=True)
class Sides:
    """Every comparison twice, once from each of its systems' side: ``system`` is that system,
    ``score`` and ``soft`` its outcome and soft probability (1 - A's for B's side), ``length``
    its own answer's length."""

    prompt: np.ndarray
    system: np.ndarray
    score: np.ndarray
    soft: np.ndarray
    length: np.ndarray


def each_side(arrays: ComparisonArrays) -> Sides:
    """The comparisons from each system's side (A's sides first, then B's), so that a system's
    record against all its opponents is a sum over its own rows."""
    return Sides(
        prompt=np.concatenate([arrays.prompt, arrays.prompt]),
        system=np.concatenate([arrays.a, arrays.b]),
        score=np.concatenate([arrays.outcome, 1.0 - arrays.outcome]),
        soft=np.concatenate([arrays.soft, 1.0 - arrays.soft]),
        length=np.concatenate([arrays.length_a, arrays.length_b]),
    )


def tallies(
    column: np.ndarray, score: np.ndarray, n_columns: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Decisions, wins and ties of comparisons grouped by ``column`` (``score``: each one's
    outcome from its column's point of view), as int arrays of ``n_columns``; the losses are
    the rest."""
    n = np.bincount(column, minlength=n_columns)
    wins = np.bincount(column[score == 1.0], minlength=n_columns)
    ties = np.bincount(column[score == 0.5], minlength=n_columns)
    return n, wins, ties
