"""A leaderboard of systems from the panel's pairwise decisions: Bradley-Terry strengths with
ties modelled explicitly (Davidson 1970), on an Elo-like scale, with bootstrap intervals over
prompts; and the same model with the answers' length difference as a covariate (a
length-controlled leaderboard, as Chatbot Arena's style control).

The model and its fit are ``davidson_model`` and ``davidson_fit``; this module builds the table:
the ratings with their intervals, each system's record and mean answer length.

Intervals. Prompts are resampled with replacement (the same resamples as ``win_rates``), all
comparisons of a drawn prompt kept, the model refitted on each resample (all at once, cheaply:
``davidson_fit.refit_resamples``), and the interval is the 2.5th-97.5th percentile of the
refitted ratings (the anchor's is [1000, 1000]: the ratings are differences to it).
``N_RESAMPLES`` = 500 by default: the percentiles of a 95% interval rest on the 12 or 13 most
extreme refits on either side.
"""

from collections.abc import Sequence
from typing import TypedDict

import numpy as np

from chateval.core.schema.metrics import Interval
from chateval.evaluation.comparisons import Comparison, ComparisonArrays, Sides, each_side, tallies
from chateval.evaluation.davidson_fit import (
    BASE_RATING,
    ELO_SCALE,
    RIDGE,
    fit_point,
    log_strengths,
    prepare_fit,
    refit_resamples,
)
from chateval.evaluation.davidson_model import LENGTH_COVARIATE
from chateval.evaluation.prompt_bootstrap import percentile_intervals, resample_counts

N_RESAMPLES = 500


class LeaderboardRow(TypedDict):
    rank: int  # 1 = highest rating
    system: str
    rating: float
    ci95: list[float]
    n: int  # comparisons the system took part in
    wins: int
    ties: int
    losses: int
    mean_length: float  # words, over the system's distinct (prompt, answer)s


class Leaderboard(TypedDict):
    anchor: str
    scale: str
    length_control: bool
    length_covariate: str | None  # what x is, with length control
    length_coefficient: Interval | None  # gamma, with length control
    tie_parameter: Interval | None  # nu; None when the data have no ties (plain Bradley-Terry)
    rows: list[LeaderboardRow]
    prompts: int
    comparisons: int
    resamples: int
    ridge: float


def leaderboard(
    comparisons: Sequence[Comparison],
    systems: Sequence[str] | None = None,
    anchor: str | None = None,
    length_control: bool = False,
    n_resamples: int = N_RESAMPLES,
    seed: int = 0,
    ridge: float = RIDGE,
) -> Leaderboard:
    """Rank the systems by their Davidson-Bradley-Terry rating, with 95% bootstrap intervals
    over prompts (see the module doc); ``length_control`` fits the length covariate too and
    reports its coefficient gamma. Seeded and deterministic. ``ridge`` must be > 0 when
    resampling (the refits rely on it to stay finite)."""
    if n_resamples > 0 and ridge <= 0:
        raise ValueError("bootstrap refits need a ridge > 0")
    arrays, index, design = prepare_fit(comparisons, systems, anchor, length_control)
    params, _ = fit_point(design, design.weights.sum(axis=0), ridge)
    counts = resample_counts(len(arrays.prompts), n_resamples, seed)
    replicates = refit_resamples(design, counts, params, ridge)
    ratings = BASE_RATING + ELO_SCALE * log_strengths(design, params)
    rating_reps = BASE_RATING + ELO_SCALE * log_strengths(design, replicates)
    intervals = percentile_intervals(ratings, rating_reps)

    n_systems = len(arrays.systems)
    sides = each_side(arrays)
    n, wins, ties = tallies(sides.system, sides.score, n_systems)
    lengths = _mean_lengths(arrays, sides)
    # Rounded to 0.001 points: equal strengths that the fit leaves a tolerance apart keep the
    # systems' listed order.
    order = sorted(range(n_systems), key=lambda i: (-round(float(ratings[i]), 3), i))
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
        for rank, i in enumerate(order, start=1)
    ]
    tie_parameter = gamma = None
    if design.tie_column is not None:
        column = design.tie_column
        tie_parameter = percentile_intervals(np.exp(params[[column]]), np.exp(replicates[:, [column]]))[0]
    if design.gamma_column is not None:
        column = design.gamma_column
        gamma = percentile_intervals(params[[column]], replicates[:, [column]])[0]
    return {
        "anchor": arrays.systems[index],
        "scale": f"{BASE_RATING:g} + 400 log10(strength / strength of {arrays.systems[index]})",
        "length_control": length_control,
        "length_covariate": LENGTH_COVARIATE if length_control else None,
        "length_coefficient": gamma,
        "tie_parameter": tie_parameter,
        "rows": rows,
        "prompts": len(arrays.prompts),
        "comparisons": len(comparisons),
        "resamples": len(counts),
        "ridge": ridge,
    }


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
