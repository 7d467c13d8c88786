"""Two runs on the items both judged: is the gap between them more than noise?

The paper's gaps between configurations are 2 to 5 items of 80, so two runs' separate
confidence intervals overlap almost always and say little. Paired statistics use the fact that
both runs judged the same items:

- **accuracy**: the difference (run B minus run A) with Tango's score interval for paired
  proportions (``paired_interval``), which holds its 95% with few items and few disagreements
  (the percentile bootstrap it replaced gave [0, 0] when the runs never disagreed);
- **kappa**: the hull of two intervals. (1) The accuracy difference's interval mapped through
  kappa's line at the two runs' mean chance agreement p_e: kappa_B - kappa_A -+ its arms over
  (1 - p_e); it keeps a width where the runs barely disagree, but treats p_e as known and
  covered only 81.8% to 87.0% of planted differences between a panel worse than chance and one
  better (kappa -0.3 and +0.3, labels A 80/B 15/tie 5, 10 to 200 items). (2) Zou's interval for a difference
  (``intervals.zou_difference``): each run's own kappa interval (``intervals.kappa_interval``,
  which holds where chance agreement is estimated) combined through the correlation of the
  two kappas over resamples of the shared items; alone it shrinks towards [0, 0] for runs that
  agree on every item. ``scripts/simulate_intervals.py --only paired`` measures both
  differences (5 to 200 items; panels that agree, differ, copy each other, or contradict the
  humans): the hull holds 96.0% or more in every row; the percentile bootstrap used before
  covered 75% at 5 items;
- **the correlations** (direct runs): resample the shared items (whole groups where items come
  in groups, e.g. Topical-Chat dialogues) and compute both runs' correlations on each resample;
  the difference gets Zou's interval (``intervals.correlation_difference_interval``): each
  side's Fisher-z interval combined through the correlation of the two sides' resamples
  (``scripts/simulate_intervals.py --only paired-correlations``, 200 repetitions a row so far:
  docs/performance/paired_correlations.json; the percentile interval of the resampled
  differences it replaced had no t quantile for 6 dialogues);
- **exact McNemar test** for pairwise accuracy: only items that exactly one run got right
  carry information about which run is more accurate; under "equally accurate" each of them
  is a fair coin, so the two-sided binomial test on those discordant items gives the p-value.

An interval that excludes 0 is a gap the data supports.

A correlation that is undefined (a constant prediction, see chateval.evaluation.agreement.metrics) has no
difference: its value is null with the reason, resamples where either side is undefined are
counted and left out of the difference's interval, and averages leave such dimensions out.
The same comparison serves a run against itself before discussion (``names``: blind, final).
"""

from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np

from chateval.evaluation.agreement.correlations import (
    correlation_or_nan,
    correlation_replicates,
    undefined_reason,
)
from chateval.evaluation.agreement.intervals import (
    correlation_difference_interval,
    kappa_interval,
    zou_difference,
)
from chateval.evaluation.agreement.metrics import (
    CORRELATION_DIMENSIONS,
    agreement_replicates,
    chance_agreement,
    kappa_from_codes,
    label_codes,
)
from chateval.evaluation.agreement.paired_interval import accuracy_difference_interval
from chateval.evaluation.bootstrap import counted, resample_indices
from chateval.schema.agreement import CorrelationInterval
from chateval.schema.paired import (
    BlindFinalCorrelation,
    BlindFinalDirect,
    BlindFinalPairwise,
    BlindFinalScore,
    DirectComparison,
    DirectComparisonOf,
    PairedAverage,
    PairedCorrelation,
    PairedCorrelations,
    PairedScore,
    PairwiseComparison,
)
from chateval.schema.verdicts import VerdictRecord


def mcnemar_exact(a_only_right: int, b_only_right: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts (1.0 when there are none)."""
    from scipy.stats import binomtest

    discordant = a_only_right + b_only_right
    if discordant == 0:
        return 1.0
    return float(binomtest(a_only_right, discordant, 0.5).pvalue)


def compare_pairwise(
    truth: Sequence[str], labels_a: Sequence[str], labels_b: Sequence[str], seed: int = 0
) -> PairwiseComparison:
    """Accuracy and kappa of two runs' labels on the same items, their paired differences
    (B - A) with their intervals (the module doc; ``seed`` seeds the kappa difference's
    bootstrap), and the exact McNemar test on accuracy."""
    t, a, b = label_codes(truth), label_codes(labels_a), label_codes(labels_b)
    n = len(t)
    acc_a, acc_b = float(np.mean(a == t)), float(np.mean(b == t))
    kappa_a, kappa_b = kappa_from_codes(t, a), kappa_from_codes(t, b)
    a_only = int(np.sum((a == t) & (b != t)))
    b_only = int(np.sum((b == t) & (a != t)))
    low, high = accuracy_difference_interval(b_only, a_only, n)
    difference = acc_b - acc_a
    kappa_difference = kappa_b - kappa_a
    chance = (chance_agreement(t, a) + chance_agreement(t, b)) / 2 if n else 1.0
    mapped = _mapped_kappa_difference(kappa_difference, difference, (low, high), chance)
    zou = _zou_kappa_difference(t, a, b, seed)
    kappa_ci = [min(mapped[0], zou[0]), max(mapped[1], zou[1])]
    return {
        "n": n,
        "accuracy": {"a": acc_a, "b": acc_b, "difference": {"value": difference, "ci95": [low, high]}},
        "kappa": {"a": kappa_a, "b": kappa_b, "difference": {"value": kappa_difference, "ci95": kappa_ci}},
        "mcnemar": {"a_only_right": a_only, "b_only_right": b_only, "p_value": mcnemar_exact(a_only, b_only)},
    }


def _mapped_kappa_difference(
    kappa_difference: float, accuracy_difference: float, accuracy_ci: tuple[float, float], chance: float
) -> list[float]:
    """The accuracy difference's interval mapped through kappa's line at the two runs' mean
    chance agreement (the module doc), kept around the point value and within kappa's range
    of differences [-2, 2]; that whole range when chance is 1."""
    if chance >= 1.0:
        return [-2.0, 2.0]
    slope = 1 / (1 - chance)
    low, high = accuracy_ci
    return [
        max(min(kappa_difference - (accuracy_difference - low) * slope, kappa_difference), -2.0),
        min(max(kappa_difference + (high - accuracy_difference) * slope, kappa_difference), 2.0),
    ]


def _zou_kappa_difference(t: np.ndarray, a: np.ndarray, b: np.ndarray, seed: int) -> list[float]:
    """Zou's interval of kappa_b - kappa_a (the module doc) from label codes: truth ``t``, the
    runs' ``a`` and ``b``; resamples of the items seeded by ``seed``."""
    samples = resample_indices(len(t), seed)
    sides = []
    for labels in (a, b):
        replicates = agreement_replicates(t, labels, samples)[:, 1] if samples else np.empty(0)
        observed, chance = float(np.mean(t == labels)) if len(t) else 0.0, chance_agreement(t, labels)
        interval = kappa_interval(kappa_from_codes(t, labels), observed, chance, len(t), replicates, None)
        sides.append((interval, replicates))
    (first, replicates_a), (second, replicates_b) = sides
    return zou_difference(
        first["value"], second["value"], first["ci95"], second["ci95"], replicates_a, replicates_b
    )


def _blind_final(score: PairedScore) -> BlindFinalScore:
    return {"blind": score["a"], "final": score["b"], "difference": score["difference"]}


def compare_blind_final_pairwise(
    truth: Sequence[str], blind: Sequence[str], final: Sequence[str]
) -> BlindFinalPairwise:
    """``compare_pairwise`` of a run's blind vote (A) against its final decision (B), the sides
    named ``blind`` and ``final``."""
    found = compare_pairwise(truth, blind, final)
    test = found["mcnemar"]
    return {
        "n": found["n"],
        "accuracy": _blind_final(found["accuracy"]),
        "kappa": _blind_final(found["kappa"]),
        "mcnemar": {
            "blind_only_right": test["a_only_right"],
            "final_only_right": test["b_only_right"],
            "p_value": test["p_value"],
        },
    }


Paired = TypeVar("Paired", PairedCorrelation, BlindFinalCorrelation)
# Names the two sides' correlations and their difference: {"a": .., "b": ..} or {"blind": .., "final": ..}.
Sides = Callable[[float | None, float | None, CorrelationInterval], Paired]


def _ab(a: float | None, b: float | None, difference: CorrelationInterval) -> PairedCorrelation:
    return {"a": a, "b": b, "difference": difference}


def _blind_final_correlation(
    blind: float | None, final: float | None, difference: CorrelationInterval
) -> BlindFinalCorrelation:
    return {"blind": blind, "final": final, "difference": difference}


def compare_direct(
    truth: Mapping[str, Sequence[float]],
    scores_a: Mapping[str, Sequence[float]],
    scores_b: Mapping[str, Sequence[float]],
    seed: int = 0,
    groups: Sequence[str] | None = None,
) -> DirectComparison:
    """Spearman and Kendall of two runs per dimension and on average, with Zou's intervals of
    the differences (B - A) from both sides' resamples (the module doc). Every dimension must
    cover the same items (in the same order); ``groups`` names each item's group for a cluster
    bootstrap. An undefined
    correlation is null (the difference's ``reason`` says why) and so is its difference; the
    average is over the dimensions defined for both."""
    return _compare_direct(truth, scores_a, scores_b, seed, groups, ("a", "b"), _ab)


def compare_blind_final_direct(
    truth: Mapping[str, Sequence[float]],
    blind: Mapping[str, Sequence[float]],
    final: Mapping[str, Sequence[float]],
    seed: int = 0,
    groups: Sequence[str] | None = None,
) -> BlindFinalDirect:
    """``compare_direct`` of a run's blind vote (A) against its final decision (B)."""
    return _compare_direct(truth, blind, final, seed, groups, ("blind", "final"), _blind_final_correlation)


Scored = tuple[np.ndarray, np.ndarray, np.ndarray]  # one dimension's human, side A and side B scores


def _correlations_of_all(arrays: Sequence[Scored]) -> np.ndarray:
    """Per dimension: rho_a, tau_a, rho_b, tau_b of every item (NaN: undefined)."""
    return np.asarray([[*correlation_or_nan(t, a), *correlation_or_nan(t, b)] for t, a, b in arrays])


def _correlations(arrays: Sequence[Scored], samples: Sequence[np.ndarray]) -> np.ndarray:
    """Per resample (rows: ``samples``) and dimension (human, side A, side B arrays): rho_a,
    tau_a, rho_b, tau_b (NaN: undefined)."""
    per_dimension = [
        np.concatenate([correlation_replicates(t, a, samples), correlation_replicates(t, b, samples)], axis=1)
        for t, a, b in arrays
    ]
    return np.stack(per_dimension, axis=1)


def _compare_direct(
    truth: Mapping[str, Sequence[float]],
    scores_a: Mapping[str, Sequence[float]],
    scores_b: Mapping[str, Sequence[float]],
    seed: int,
    groups: Sequence[str] | None,
    names: tuple[str, str],
    sides: Sides[Paired],
) -> DirectComparisonOf[Paired]:
    """``compare_direct`` with the sides named ``names`` in the reasons and by ``sides`` in the result."""
    dims = list(truth)
    n = len(truth[dims[0]]) if dims else 0
    if any(len(truth[d]) != n or len(scores_a[d]) != n or len(scores_b[d]) != n for d in dims):
        raise ValueError("every dimension must be scored on the same items by both runs")

    arrays: dict[str, Scored] = {
        d: (
            np.asarray(truth[d], dtype=float),
            np.asarray(scores_a[d], dtype=float),
            np.asarray(scores_b[d], dtype=float),
        )
        for d in dims
    }

    samples = resample_indices(n, seed, groups)
    sides_of = [arrays[d] for d in dims]  # per dimension: human, side A, side B
    value = _correlations_of_all(sides_of)
    reps = _correlations(sides_of, samples) if samples else np.empty((0,))
    averaged = [i for i, d in enumerate(dims) if d in CORRELATION_DIMENSIONS] or list(range(len(dims)))
    reasons = {
        d: (undefined_reason(arrays[d][0], arrays[d][1]), undefined_reason(arrays[d][0], arrays[d][2]))
        for d in dims
    }

    Reasons = tuple[str | None, str | None]  # why side a's and side b's correlation is undefined

    def undefined_text(whys: Reasons) -> str:
        return "; ".join(f"{side}: {why}" for side, why in zip(names, whys, strict=True) if why)

    units = len(set(groups)) if groups else n

    def paired(rows: np.ndarray, replicates: np.ndarray, whys: Reasons, col: int) -> Paired:
        """Column ``col`` (0: spearman, 1: kendall) of both sides, and their difference."""
        a, b = float(rows[col]), float(rows[col + 2])
        side_a, side_b = (replicates[:, k] if len(replicates) else np.empty(0) for k in (col, col + 2))
        undefined = undefined_text(whys)
        if undefined:
            difference, _ = counted(None, side_b - side_a)
            difference["reason"] = undefined
        else:
            difference = correlation_difference_interval(a, b, side_a, side_b, units, n)
        return sides(None if whys[0] else a, None if whys[1] else b, difference)

    def entry(rows: np.ndarray, replicates: np.ndarray, whys: Reasons) -> PairedCorrelations[Paired]:
        return {"spearman": paired(rows, replicates, whys, 0), "kendall": paired(rows, replicates, whys, 1)}

    empty = np.empty((0, 4))
    out: DirectComparisonOf[Paired] = {
        "n": n,
        "resampled": f"{len(set(groups))} groups" if groups else "items",
        "dimensions": {
            d: entry(value[i], reps[:, i] if len(reps) else empty, reasons[d]) for i, d in enumerate(dims)
        },
    }
    kept = [i for i in averaged if not any(reasons[dims[i]])]
    if dims:
        average: PairedAverage[Paired] = {"dimensions": [dims[i] for i in kept]}
        left_out = {dims[i]: undefined_text(reasons[dims[i]]) for i in averaged if i not in kept}
        if left_out:
            average["left_out"] = left_out
        if kept:
            # A resample where a kept dimension is undefined is undefined for the mean (NaN).
            mean_reps = reps[:, kept].mean(axis=1) if len(reps) else np.empty((0, 4))
            both = entry(value[kept].mean(axis=0), mean_reps, (None, None))
            average["spearman"], average["kendall"] = both["spearman"], both["kendall"]
        out["average"] = average
    return out


def compare_records(
    task: str, records_a: Sequence[VerdictRecord], records_b: Sequence[VerdictRecord], seed: int = 0
) -> PairwiseComparison | DirectComparison | None:
    """Compare two runs' verdict records (verdicts.jsonl) on the items both scored and humans
    labelled; None when they share none."""
    if task == "pairwise":
        return compare_pairwise_records(records_a, records_b, seed)
    return compare_direct_records(records_a, records_b, seed)


def compare_pairwise_records(
    records_a: Sequence[VerdictRecord], records_b: Sequence[VerdictRecord], seed: int = 0
) -> PairwiseComparison | None:
    """``compare_records`` of two pairwise runs."""
    by_id = {r["item_id"]: r for r in records_a}
    shared = [
        (human, label_a, label)
        for r in records_b
        if r["item_id"] in by_id
        and (human := r.get("human_label")) is not None
        and (label := r.get("label")) is not None
        and (label_a := by_id[r["item_id"]].get("label")) is not None
    ]
    if not shared:
        return None
    return compare_pairwise(
        [h for h, _, _ in shared], [a for _, a, _ in shared], [b for _, _, b in shared], seed
    )


def compare_direct_records(
    records_a: Sequence[VerdictRecord], records_b: Sequence[VerdictRecord], seed: int = 0
) -> DirectComparison | None:
    """``compare_records`` of two direct runs, on the dimensions every shared item scored."""
    by_id = {r["item_id"]: r for r in records_a}
    pairs = [
        (scores_a, scores, human, r)
        for r in records_b
        if r["item_id"] in by_id
        and (human := r.get("human_scores"))
        and (scores := r.get("scores"))
        and (scores_a := by_id[r["item_id"]].get("scores"))
    ]
    dims = [
        d for d in (pairs[0][2] if pairs else {}) if all(d in a and d in b and d in h for a, b, h, _ in pairs)
    ]
    if not pairs or not dims:
        return None
    grouped = all("group" in r for _, _, _, r in pairs)
    return compare_direct(
        {d: [h[d] for _, _, h, _ in pairs] for d in dims},
        {d: [a[d] for a, _, _, _ in pairs] for d in dims},
        {d: [b[d] for _, b, _, _ in pairs] for d in dims},
        seed,
        [r["group"] for _, _, _, r in pairs] if grouped else None,
    )
