"""Win rates of systems judged by the panel, the length bias of its verdicts, and per-system
means of direct scores, each with a seeded percentile bootstrap interval over prompts.

The input is one ``Comparison`` per panel decision (both answer orders already combined into
one hard decision, and a soft probability where the run has one). A system's win rate counts a
tie as half a win. Every interval resamples *prompts* with replacement and keeps all
comparisons of a drawn prompt: the comparisons of one prompt share its difficulty and its
answers, so they are not independent evidence, and resampling them one by one would make the
interval too narrow (the cluster bootstrap of ``metrics.py``, with the prompt as the cluster).

All statistics of one call are computed on the *same* resamples of the prompts of the whole
input (not of each pair's own prompts), so they are jointly consistent, as in arena-style
tools; where a pair was compared on only some prompts, its number of prompts varies between
resamples, which is part of the sampling the interval describes. The bootstrap is vectorised:
a resample is a row of a (resamples x prompts) matrix of draw counts, and every statistic here
is a ratio of sums over comparisons, so a resample's value is the count matrix times per-prompt
sums (one matrix product for all resamples and all pairs at once).

Degenerate inputs: with fewer than 2 prompts nothing is resampled and an interval is
``[value, value]`` (as in ``metrics.py``); a resample in which a statistic has no comparisons
(its denominator is 0) is left out of that statistic's percentiles.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np

from chateval.core.schema import Interval

N_RESAMPLES = 1000
OUTCOMES = (0.0, 0.5, 1.0)  # B won, tie, A won


@dataclass(frozen=True)
class Comparison:
    """One panel decision between the answers of two systems to one prompt.

    ``outcome`` is the panel's hard decision over both answer orders: 1.0 when A won, 0.5 for a
    tie, 0.0 when B won. ``soft`` is the panel's probability that A is better (ties counted
    half), None when the run has no soft verdicts. ``prompt`` is the resampling unit of every
    interval; lengths are the answers' lengths in words.
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


@dataclass(frozen=True)
class ScoredResponse:
    """A direct-scoring result: the panel's mean score per dimension for one system's response
    to one prompt."""

    prompt: str
    system: str
    scores: Mapping[str, float]


class PairWinRate(TypedDict):
    """Wins, ties and losses of ``system_a`` against ``system_b`` and its win rate (ties half)."""

    system_a: str
    system_b: str
    n: int  # comparisons of the pair
    prompts: int  # distinct prompts they come from
    wins: int
    ties: int
    losses: int
    win_rate: Interval  # hard decisions, ties count half
    soft_win_rate: Interval | None  # mean soft probability; None when no comparison has one
    n_soft: int  # comparisons with a soft probability


class SystemWinRate(TypedDict):
    """A system's record against all its opponents (ties half)."""

    system: str
    n: int
    wins: int
    ties: int
    losses: int
    win_rate: Interval
    soft_win_rate: Interval | None
    n_soft: int


class LengthBias(TypedDict):
    """How often the longer answer won a decisive verdict.

    ``share`` is ``longer_won / n`` over decisive verdicts (not ties) between answers of
    different lengths, None when there are none; ``equal_lengths`` decisive verdicts were left
    out because both answers had the same length, ``ties`` because they decided nothing.
    """

    share: Interval | None
    n: int
    longer_won: int
    equal_lengths: int
    ties: int


class WinRates(TypedDict):
    systems: list[str]
    prompts: int
    comparisons: int
    resamples: int  # 0 when fewer than 2 prompts
    pairs: list[PairWinRate]
    overall: list[SystemWinRate]
    length_bias: LengthBias


class SystemMean(TypedDict):
    """One system's mean score on one dimension over the prompts it was scored on."""

    system: str
    dimension: str
    n: int  # prompts
    mean: Interval


class PairedDifference(TypedDict):
    """Mean of ``system_a``'s score minus ``system_b``'s over the prompts both were scored on
    (None when they share none)."""

    system_a: str
    system_b: str
    dimension: str
    n: int  # shared prompts
    difference: Interval | None


class DirectSystems(TypedDict):
    systems: list[str]
    dimensions: list[str]
    prompts: int
    resamples: int
    means: list[SystemMean]
    differences: list[PairedDifference]


def resample_counts(n_prompts: int, n_resamples: int, seed: int) -> np.ndarray:
    """How often each prompt is drawn in each bootstrap resample: an int matrix of shape
    (resamples, prompts) whose rows sum to ``n_prompts``; (0, n_prompts) when fewer than 2
    prompts (nothing to resample) or ``n_resamples`` is 0."""
    if n_prompts < 2 or n_resamples <= 0:
        return np.zeros((0, n_prompts), dtype=np.int64)
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_prompts, size=(n_resamples, n_prompts))
    # One bincount over (resample, prompt) cells instead of a Python loop over resamples.
    flat = draws + n_prompts * np.arange(n_resamples)[:, None]
    return np.bincount(flat.ravel(), minlength=n_resamples * n_prompts).reshape(n_resamples, n_prompts)


def percentile_intervals(values: np.ndarray, replicates: np.ndarray) -> list[Interval]:
    """``{"value", "ci95"}`` for each column: the 2.5th-97.5th percentile of its defined
    (non-NaN) replicates; ``[value, value]`` when there are none (nothing was resampled)."""
    out: list[Interval] = []
    for k, value in enumerate(values):
        column = replicates[:, k] if replicates.size else np.empty(0)
        defined = column[~np.isnan(column)]
        if len(defined) == 0:
            out.append({"value": float(value), "ci95": [float(value), float(value)]})
            continue
        low, high = np.percentile(defined, [2.5, 97.5])
        out.append({"value": float(value), "ci95": [float(low), float(high)]})
    return out


def ratio_intervals(numerators: np.ndarray, denominators: np.ndarray, counts: np.ndarray) -> list[Interval]:
    """Intervals of the ratios ``sum(numerator) / sum(denominator)`` of each column, given
    per-prompt sums (prompts x columns) and the resample count matrix."""
    with np.errstate(invalid="ignore", divide="ignore"):
        values = numerators.sum(axis=0) / denominators.sum(axis=0)
        replicates = (counts @ numerators) / (counts @ denominators)
    return percentile_intervals(values, replicates)


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


def _per_prompt(
    prompt: np.ndarray, column: np.ndarray, values: np.ndarray, shape: tuple[int, int]
) -> np.ndarray:
    """Sum ``values`` into a (prompts x columns) matrix at (prompt, column)."""
    out = np.zeros(shape)
    np.add.at(out, (prompt, column), values)
    return out


def _records(
    prompt: np.ndarray,
    n_prompts: int,
    column: np.ndarray,
    score: np.ndarray,
    soft: np.ndarray,
    n_columns: int,
    counts: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[Interval], list[Interval | None], np.ndarray]:
    """Counts, ties, wins, hard and soft win-rate intervals of comparisons grouped by
    ``column`` (each comparison's prompt in ``prompt``); ``score`` and ``soft`` are each
    comparison's outcome and soft probability from its column's point of view."""
    shape = (n_prompts, n_columns)
    ones = np.ones_like(score)
    n = _per_prompt(prompt, column, ones, shape)
    hard = ratio_intervals(_per_prompt(prompt, column, score, shape), n, counts)
    has_soft = ~np.isnan(soft)
    n_soft = _per_prompt(prompt[has_soft], column[has_soft], ones[has_soft], shape)
    soft_sums = _per_prompt(prompt[has_soft], column[has_soft], soft[has_soft], shape)
    soft_intervals = ratio_intervals(soft_sums, n_soft, counts)
    soft_out: list[Interval | None] = [
        interval if n_soft[:, k].sum() > 0 else None for k, interval in enumerate(soft_intervals)
    ]
    wins = np.bincount(column[score == 1.0], minlength=n_columns)
    ties = np.bincount(column[score == 0.5], minlength=n_columns)
    return n.sum(axis=0), ties, wins, hard, soft_out, n_soft.sum(axis=0)


def win_rates(
    comparisons: Sequence[Comparison],
    systems: Sequence[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> WinRates:
    """Per pair of systems and per system: wins, ties, losses and win rate (ties half), hard
    and soft, with 95% bootstrap intervals over prompts; and the length bias.

    A pair is reported once, oriented as ``systems`` orders it (first appearance by default):
    ``system_a`` comes first and the counts and rates are its. Pairs never compared are left out.
    """
    arrays = comparison_arrays(comparisons, systems)
    counts = resample_counts(len(arrays.prompts), n_resamples, seed)
    n_systems = len(arrays.systems)

    # Orient every comparison to the pair's first system, so (i, j) and (j, i) pool together.
    first = np.minimum(arrays.a, arrays.b)
    second = np.maximum(arrays.a, arrays.b)
    flipped = arrays.a != first
    score = np.where(flipped, 1.0 - arrays.outcome, arrays.outcome)
    soft = np.where(flipped, 1.0 - arrays.soft, arrays.soft)
    pair_index = first * n_systems + second
    present = np.unique(pair_index)
    column = np.searchsorted(present, pair_index)
    n_prompts = len(arrays.prompts)
    n, ties, wins, hard, soft_rates, n_soft = _records(
        arrays.prompt, n_prompts, column, score, soft, len(present), counts
    )
    pairs: list[PairWinRate] = []
    for k, index in enumerate(present):
        i, j = divmod(int(index), n_systems)
        pairs.append(
            {
                "system_a": arrays.systems[i],
                "system_b": arrays.systems[j],
                "n": int(n[k]),
                "prompts": len(np.unique(arrays.prompt[column == k])),
                "wins": int(wins[k]),
                "ties": int(ties[k]),
                "losses": int(n[k] - wins[k] - ties[k]),
                "win_rate": hard[k],
                "soft_win_rate": soft_rates[k],
                "n_soft": int(n_soft[k]),
            }
        )

    # Every comparison counts once for each of its systems, from that system's side.
    both_column = np.concatenate([arrays.a, arrays.b])
    both_score = np.concatenate([arrays.outcome, 1.0 - arrays.outcome])
    n, ties, wins, hard, soft_rates, n_soft = _records(
        np.concatenate([arrays.prompt, arrays.prompt]),
        n_prompts,
        both_column,
        both_score,
        np.concatenate([arrays.soft, 1.0 - arrays.soft]),
        n_systems,
        counts,
    )
    overall: list[SystemWinRate] = [
        {
            "system": name,
            "n": int(n[i]),
            "wins": int(wins[i]),
            "ties": int(ties[i]),
            "losses": int(n[i] - wins[i] - ties[i]),
            "win_rate": hard[i],
            "soft_win_rate": soft_rates[i],
            "n_soft": int(n_soft[i]),
        }
        for i, name in enumerate(arrays.systems)
    ]
    return {
        "systems": list(arrays.systems),
        "prompts": len(arrays.prompts),
        "comparisons": len(comparisons),
        "resamples": len(counts),
        "pairs": pairs,
        "overall": overall,
        "length_bias": _length_bias(arrays, counts),
    }


def length_bias(
    comparisons: Sequence[Comparison], n_resamples: int = N_RESAMPLES, seed: int = 0
) -> LengthBias:
    """The share of decisive verdicts won by the longer answer, with a bootstrap interval over
    prompts (0.5 is no bias; a judge that prefers longer answers scores above it)."""
    arrays = comparison_arrays(comparisons)
    return _length_bias(arrays, resample_counts(len(arrays.prompts), n_resamples, seed))


def _length_bias(arrays: ComparisonArrays, counts: np.ndarray) -> LengthBias:
    decisive = arrays.outcome != 0.5
    unequal = arrays.length_a != arrays.length_b
    used = decisive & unequal
    longer_won = ((arrays.outcome == 1.0) & (arrays.length_a > arrays.length_b)) | (
        (arrays.outcome == 0.0) & (arrays.length_b > arrays.length_a)
    )
    n = int(used.sum())
    share: Interval | None = None
    if n:
        shape = (len(arrays.prompts), 1)
        column = np.zeros(n, dtype=np.int64)
        prompt = arrays.prompt[used]
        won = _per_prompt(prompt, column, longer_won[used].astype(float), shape)
        total = _per_prompt(prompt, column, np.ones(n), shape)
        share = ratio_intervals(won, total, counts)[0]
    return {
        "share": share,
        "n": n,
        "longer_won": int((longer_won & used).sum()),
        "equal_lengths": int((decisive & ~unequal).sum()),
        "ties": int((~decisive).sum()),
    }


def direct_systems(
    rows: Sequence[ScoredResponse],
    systems: Sequence[str] | None = None,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
) -> DirectSystems:
    """Each system's mean score per dimension, and the paired difference of every two systems
    on the prompts both were scored on, with 95% bootstrap intervals over prompts.

    Pairing on shared prompts removes the prompts' own difficulty from the difference, which
    is why it is usually much narrower than the two means' intervals suggest. A dimension a row
    lacks (or a NaN score) leaves that row out of that dimension only. A system scored twice on
    one prompt is an error: a paired difference needs one score per prompt and system.
    """
    if not rows:
        raise ValueError("no scored responses")
    seen = list(dict.fromkeys(row.system for row in rows))
    order = seen if systems is None else list(dict.fromkeys(systems))
    if set(order) != set(seen):
        raise ValueError(
            f"systems given ({', '.join(sorted(order))}) differ from those scored ({', '.join(sorted(seen))})"
        )
    prompts = list(dict.fromkeys(row.prompt for row in rows))
    dimensions = list(dict.fromkeys(d for row in rows for d in row.scores))
    p_index = {p: i for i, p in enumerate(prompts)}
    s_index = {s: i for i, s in enumerate(order)}
    d_index = {d: i for i, d in enumerate(dimensions)}
    values = np.full((len(dimensions), len(prompts), len(order)), np.nan)
    filled = np.zeros((len(prompts), len(order)), dtype=bool)
    for row in rows:
        p, s = p_index[row.prompt], s_index[row.system]
        if filled[p, s]:
            raise ValueError(f"system {row.system!r} is scored twice on prompt {row.prompt!r}")
        filled[p, s] = True
        for dim, score in row.scores.items():
            values[d_index[dim], p, s] = score
    counts = resample_counts(len(prompts), n_resamples, seed)
    pairs = [(i, j) for i in range(len(order)) for j in range(i + 1, len(order))]
    means: list[SystemMean] = []
    differences: list[PairedDifference] = []
    for d, dim in enumerate(dimensions):
        present = ~np.isnan(values[d])
        sums = np.where(present, values[d], 0.0)
        for s, interval in enumerate(ratio_intervals(sums, present.astype(float), counts)):
            n = int(present[:, s].sum())
            if n:
                means.append({"system": order[s], "dimension": dim, "n": n, "mean": interval})
        if not pairs:
            continue
        first, second = np.array(pairs).T
        shared = present[:, first] & present[:, second]
        diff = np.where(shared, values[d][:, first] - values[d][:, second], 0.0)
        for k, interval in enumerate(ratio_intervals(diff, shared.astype(float), counts)):
            n = int(shared[:, k].sum())
            differences.append(
                {
                    "system_a": order[pairs[k][0]],
                    "system_b": order[pairs[k][1]],
                    "dimension": dim,
                    "n": n,
                    "difference": interval if n else None,
                }
            )
    return {
        "systems": order,
        "dimensions": dimensions,
        "prompts": len(prompts),
        "resamples": len(counts),
        "means": means,
        "differences": differences,
    }
