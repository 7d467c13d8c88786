"""A leaderboard of systems calibrated by human labels on a random slice of all comparisons:
each system's Bradley-Terry rating (``ppi_bradley_terry``) and its win rate against the field
(``ppi.ppi_mean``), both prediction-powered (PPI++), and which system is best.

Unlike the per-pair calibrated win rates (``systems``), which need labelled comparisons of every
pair, this pools the labels of all pairs: 40 labels spread over 10 pairs of 5 systems calibrate
every system's rating and field win rate, where no single pair has enough.

- Rating: logistic Bradley-Terry, ties as half wins, on the scale of ``leaderboard`` (the anchor
  at 1000); its interval from the PPI sandwich covariance, small-sample corrected, with a
  Student t quantile (labelled comparisons - ratings estimated degrees of freedom; the anchor's
  is [1000, 1000]; ``ppi_bradley_terry``). A prior keeps every
  rating finite: ``PRIOR_TIES`` pseudo-comparison per system against the anchor, a tie, in the
  labelled and in the unlabelled slice (its gradients in the sandwich, not in the degrees of
  freedom; the panel's rows weighed so that the prior adds no tilt towards a biased panel). Without it a
  system that lost (or won) every labelled comparison had no finite rating and no leaderboard
  was shown; with it such a rating is pulled towards the anchor by one tie's worth, and its
  interval, widened by that tie's gradient, held at least 94% in the simulations of
  scripts/simulate_intervals.py (three systems, one far behind, 10 to 40 labels). Such systems
  are named (``one_sided``): their rating says "below" (or "above") more than how far; so are
  groups of systems that never lost (or never won) a labelled comparison against the rest, or
  were never compared with it (``one_sided_groups``, ``label_graph``): the labels bound their
  members' ratings against each other, not the group's distance from the rest.
- Every comparison labelled: the same fit of the labels alone (``labels_only``, lambda 0), the
  panel taking no part; no field win rates (nothing left to calibrate: the human win rates are
  the estimate).
- Field win rate: over every comparison a system took part in, its outcome from its own side
  (win 1, tie 0.5, loss 0), the human one on labelled comparisons and the panel's as prediction;
  a PPI++ mean bounded to [0, 1] (``ppi``: t quantile, never narrower than every item labelled).
- Best system: the top rating, called resolved only when its interval overlaps no other system's
  (conservative: two overlapping 95% intervals can still differ significantly); otherwise the
  highest-rated system whose interval overlaps it is named. The same for the field win rates.

The panel's predictions are its hard decisions, or its soft probabilities when the run
aggregates soft verdicts and every comparison it decided has one. A comparison the panel could
not decide (every verdict failed: ``undecided``) stays in, its prediction a tie (0.5), hard or
soft: PPI takes any prediction, so long as the labelled and unlabelled comparisons get theirs
alike, and its human label, where it has one, corrects the board like any other. Left out, the
labels of such comparisons would be lost and the board would estimate the humans' verdicts on
the comparisons the panel managed to decide, not on all of them. The board counts them
(``undecided``, ``undecided_labelled``). In ``scripts/simulate_intervals.py`` a panel that
abstains on about 30% of the comparisons (60% of those the humans tie) left the ratings'
intervals holding 95.3% to 98.5% of the planted ratings (10 and 40 labels) and the field win
rates' 94.8% and 95.8% (10% and 25% of 240 labelled).

The labelled comparisons must be a uniformly random subset of all comparisons; comparisons of
one prompt are treated as independent. ``label_slice`` tests the labelled share across pairs:
a slice that is uneven beyond chance (p < 0.05) is flagged (``label_slice``), one that a random
draw gives once in a thousand at most (p < 0.001; labels only on one system's comparisons, say)
is refused. On the simulations' random slices it flagged 3.5% and refused 0.1%.
"""

from collections.abc import Callable, Sequence

import numpy as np

from chateval.evaluation.systems.comparisons import Comparison, panel_predictions
from chateval.evaluation.systems.davidson_fit import BASE_RATING, ELO_SCALE
from chateval.evaluation.systems.label_graph import one_sided_groups
from chateval.evaluation.systems.label_slice import REFUSE_P, label_slice, slice_text
from chateval.evaluation.systems.leaderboard import shared_ranks
from chateval.evaluation.systems.ppi import ppi_mean
from chateval.evaluation.systems.ppi_bradley_terry import (
    LogisticFit,
    bradley_terry_design,
    classical_logistic,
    ppi_logistic,
)
from chateval.schema.calibrated import BestSystem, CalibratedLeaderboard, CalibratedRow, PPIMean

# Fewer labels than this leave the sandwich covariance resting on a handful of labelled
# gradients, and the normal interval is not to be trusted; 10 is the floor, not a target.
MIN_LABELLED_OVERALL = 10
# Every system needs labelled comparisons of its own for a variance of its correction.
MIN_LABELLED_PER_SYSTEM = 2
RESOLUTION_RULE = (
    "resolved only when the best system's 95% interval overlaps no other system's "
    "(conservative: overlapping intervals can still differ)"
)


def calibrated_leaderboard(
    comparisons: Sequence[Comparison],
    human: Sequence[float | None],
    anchor: str,
    soft: bool,
    alpha: float = 0.05,
    undecided: Sequence[bool] | None = None,
) -> CalibratedLeaderboard:
    """The calibrated leaderboard of the module doc. ``human[i]`` is the human outcome of
    ``comparisons[i]`` (A's share: 1, 0.5, 0) or None where it has no label; ``undecided[i]``
    (default: none) that the panel did not decide it, whatever its outcome says: its prediction
    is then a tie. ValueError, with the reason, when the labels are too few, are not a random
    slice beyond doubt (``label_slice.REFUSE_P``) or the ratings cannot be fitted."""
    if len(human) != len(comparisons):
        raise ValueError("one human outcome (or None) per comparison")
    abstained = np.array(undecided if undecided is not None else [False] * len(comparisons), dtype=bool)
    if len(abstained) != len(comparisons):
        raise ValueError("one undecided flag per comparison")
    systems = list(dict.fromkeys(s for c in comparisons for s in (c.system_a, c.system_b)))
    if len(systems) < 2:
        raise ValueError("fewer than two systems are compared")
    labelled = np.array([h is not None for h in human])
    n = int(labelled.sum())
    if n < MIN_LABELLED_OVERALL:
        raise ValueError(f"{n} labelled comparisons; at least {MIN_LABELLED_OVERALL} needed")
    predicted, use_soft = tied_predictions(comparisons, abstained, soft)
    outcome = np.array([0.5 if h is None else h for h in human])
    position = {s: i for i, s in enumerate(systems)}
    a = np.array([position[c.system_a] for c in comparisons])
    b = np.array([position[c.system_b] for c in comparisons])
    # Each system's comparisons (rows of the mask), and how many of them are labelled.
    takes_part = (a == np.arange(len(systems))[:, None]) | (b == np.arange(len(systems))[:, None])
    labelled_counts = (takes_part & labelled).sum(axis=1)
    for system, mine in zip(systems, labelled_counts, strict=True):
        if mine < MIN_LABELLED_PER_SYSTEM:
            raise ValueError(
                f"{system} has {mine} labelled comparisons; "
                f"every system needs at least {MIN_LABELLED_PER_SYSTEM}"
            )
    found = label_slice(systems, a, b, labelled)
    if found["p_value"] < REFUSE_P:
        raise ValueError(
            f"the labelled comparisons are not a random slice of all comparisons: {slice_text(found)}. "
            "A calibrated leaderboard needs the comparisons to label drawn at random from all of "
            "them, not chosen"
        )

    anchor_index = position.get(anchor, 0)
    x = bradley_terry_design(a, b, len(systems), anchor_index)
    prior = _prior_ties(len(systems), anchor_index)
    ties = np.full(len(prior), 0.5)
    # The prior's ties join both slices: the rectified loss weighs the labelled one by
    # (1 - lambda) and the unlabelled one by lambda, so in one slice alone the prior would
    # vanish at lambda 1 (a panel that agrees with every label) or 0. The panel's unlabelled
    # rows are weighed so that they still cancel its labelled ones (no tilt towards a biased
    # panel: ppi_bradley_terry._Rows.unlabelled_weights).
    fit = ppi_logistic(
        np.vstack([x[labelled], prior]),
        np.concatenate([outcome[labelled], ties]),
        np.concatenate([predicted[labelled], ties]),
        np.vstack([x[~labelled], prior]),
        np.concatenate([predicted[~labelled], ties]),
        alpha,
        lam=0.0 if n == len(comparisons) else None,
        pseudo=len(prior),
    )
    panel = classical_logistic(
        np.vstack([x, prior]), np.concatenate([predicted, ties]), alpha, pseudo=len(prior)
    )
    assert fit.degrees_of_freedom is not None  # the t quantile's (ppi_logistic's default)
    ratings, intervals = _ratings(fit, anchor_index)
    panel_ratings, panel_intervals = _ratings(panel, anchor_index)

    fields: list[PPIMean | None] = []
    for i, mine in enumerate(takes_part):
        # The outcome from this system's side: A's share when it was A, the rest when it was B.
        side = np.where(a == i, 1.0, 0.0)

        def own(values: np.ndarray, side: np.ndarray = side) -> np.ndarray:
            return np.asarray(side * values + (1 - side) * (1 - values))

        # Every system has MIN_LABELLED_PER_SYSTEM (>= 2) labels by now; PPI also needs an unlabelled one.
        mine_l, mine_u = mine & labelled, mine & ~labelled
        fields.append(
            ppi_mean(
                own(outcome)[mine_l],
                own(predicted)[mine_l],
                own(predicted)[mine_u],
                alpha=alpha,
                bounds=(0.0, 1.0),
            )
            if mine_u.any()
            else None
        )
    # One system that won (or lost) every labelled comparison it took part in is a group of its
    # own: named as ``one_sided``, the larger (and never-compared) groups beside it.
    groups = one_sided_groups(systems, a[labelled], b[labelled], outcome[labelled])
    alone = {g["systems"][0] for g in groups if len(g["systems"]) == 1 and g["side"] != "apart"}
    order, ranks = shared_ranks(ratings)
    rows: list[CalibratedRow] = [
        {
            "rank": rank,
            "system": systems[i],
            "rating": ratings[i],
            "ci95": intervals[i],
            "panel_rating": panel_ratings[i],
            "panel_ci95": panel_intervals[i],
            "labelled": int(labelled_counts[i]),
            "comparisons": int(takes_part[i].sum()),
            "field": fields[i],
        }
        for rank, i in zip(ranks, order, strict=True)
    ]
    with_field = [r for r in rows if r["field"] is not None]
    return {
        "anchor": systems[anchor_index],
        "scale": f"{BASE_RATING:g} + 400 log10(strength / strength of {systems[anchor_index]})",
        "predictions": "soft" if use_soft else "hard",
        "labelled": n,
        "comparisons": len(comparisons),
        "lam": fit.lam,
        "alpha": alpha,
        "quantile": "t",
        "degrees_of_freedom": fit.degrees_of_freedom,
        "one_sided": [s for s in systems if s in alone],
        "one_sided_groups": [g for g in groups if g["systems"][0] not in alone],
        "labels_only": n == len(comparisons),
        "undecided": int(abstained.sum()),
        "undecided_labelled": int((abstained & labelled).sum()),
        "label_slice": found,
        "rows": rows,
        "best": best_system(rows, lambda r: (r["rating"], r["ci95"])),
        "best_field": best_system(with_field, _field_interval) if len(with_field) >= 2 else None,
        "rule": RESOLUTION_RULE,
    }


def tied_predictions(
    comparisons: Sequence[Comparison], undecided: np.ndarray, soft: bool
) -> tuple[np.ndarray, bool]:
    """The panel's prediction of each comparison (``panel_predictions``: soft when asked and
    every decided comparison has one) and whether they are soft; a tie where it did not decide."""
    decided = [c for c, skip in zip(comparisons, undecided, strict=True) if not skip]
    values, use_soft = panel_predictions(decided, soft)
    predicted = np.full(len(comparisons), 0.5)
    predicted[~undecided] = values
    return predicted, use_soft and bool(decided)


# Pseudo-comparisons per system against the anchor, each a tie (the prior: see the module
# doc); 0 is the unpenalised PPI++ fit, unbounded when a system wins or loses every comparison.
PRIOR_TIES = 1


def _prior_ties(n_systems: int, anchor: int) -> np.ndarray:
    """``PRIOR_TIES`` design rows per system but the anchor: that system against the anchor."""
    rows = np.delete(np.eye(n_systems), anchor, axis=1)
    return np.repeat(np.delete(rows, anchor, axis=0), PRIOR_TIES, axis=0)


def _ratings(fit: LogisticFit, anchor: int) -> tuple[list[float], list[list[float]]]:
    """Ratings and their intervals per system, the anchor's (fixed at the base) put back in."""
    low, high = fit.intervals()
    point = [float(v) for v in np.insert(BASE_RATING + ELO_SCALE * fit.theta, anchor, BASE_RATING)]
    lows = np.insert(BASE_RATING + ELO_SCALE * low, anchor, BASE_RATING)
    highs = np.insert(BASE_RATING + ELO_SCALE * high, anchor, BASE_RATING)
    return point, [[float(lo), float(hi)] for lo, hi in zip(lows, highs, strict=True)]


def _field_interval(row: CalibratedRow) -> tuple[float, list[float]]:
    field = row["field"]
    assert field is not None  # only rows with a field win rate are ranked by it
    return field["estimate"], field["ci"]


def best_system(
    rows: Sequence[CalibratedRow], estimate: Callable[[CalibratedRow], tuple[float, list[float]]]
) -> BestSystem:
    """The row with the highest estimate; resolved when its interval overlaps no other row's,
    else the highest other row whose interval overlaps it is the runner-up."""
    ranked = sorted(rows, key=lambda r: -estimate(r)[0])
    top, (_, (low, _)) = ranked[0], estimate(ranked[0])
    overlapping = [r for r in ranked[1:] if estimate(r)[1][1] >= low]
    return {
        "system": top["system"],
        "resolved": not overlapping,
        "runner_up": overlapping[0]["system"] if overlapping else None,
    }
