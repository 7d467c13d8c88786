"""Agreement with human labels, with 95% confidence intervals.

Correlations are scipy's definitions (Spearman rho, Kendall tau-b), computed with numpy for
small inputs (the tests check them against scipy on random data). Cohen's kappa is computed from the
confusion counts with numpy, because scikit-learn's ``cohen_kappa_score`` costs ~15 ms a call
and a bootstrap needs thousands; the tests check it against scikit-learn on random data.
Accuracy intervals are exact binomial intervals of the observed agreement with a design effect,
kappa's that interval mapped through kappa's line joined with kappa's bias-corrected bootstrap
interval (chateval.evaluation.agreement.intervals: they hold with 5 labels, where a percentile
bootstrap alone gives 5 of 5 right as [1, 1]); every accuracy and kappa is reported as
``{"value", "ci95", "method", "effective_n"}``. Correlation intervals are Fisher-z intervals whose
spread comes from a seeded bootstrap (items resampled with replacement ``N_RESAMPLES`` times),
with Student's t for the few units (the same module). When items come in groups (Topical-Chat: 6
responses to each of 60 dialogues; or several referee rows of one item, pooled per model),
whole groups are resampled instead (cluster bootstrap): rows of one group are not independent
evidence, and resampling them one by one would make the interval too narrow.

Accuracy counts every labelled item: an item without a predicted label (every verdict failed
to parse) is a wrong answer, not a smaller ``n``.

A rank correlation is undefined when either side is constant or there are fewer than 2 pairs
(a constant prediction ranks nothing): its ``value`` is null with a ``reason``; the paper's
average over the dimensions is then undefined too, and the average of the defined ones is
reported apart (``average_defined``). Bootstrap resamples where it is undefined are counted
(``undefined_resamples``, of ``resamples``) and the interval's spread is the defined ones'; it
is null (with a reason) when fewer than ``MIN_DEFINED_SHARE`` of the resamples are defined,
because those few are then a biased subset (the draws that happened to vary), not the data,
and with fewer than 3 items or groups.

Other degenerate inputs have defined values:
- empty input: accuracy and kappa 0.0, with ``n`` = 0 (intervals [0, 1] and [-1, 1]);
- kappa when truth and prediction are the same single class: 1.0 (perfect agreement); when
  chance agreement is 1 otherwise: 0.0; its interval is then [-1, 1];
- a correlation of fewer than 3 items (or groups) has no interval.
"""

from collections.abc import Mapping, Sequence

import numpy as np

from chateval.core.items import LABELS
from chateval.evaluation.agreement.correlations import (
    correlation_or_nan,
    correlation_replicates,
    undefined_reason,
)
from chateval.evaluation.agreement.intervals import accuracy_interval, correlation_interval, kappa_interval
from chateval.evaluation.bootstrap import resample_indices
from chateval.schema.agreement import (
    AverageCorrelations,
    Correlations,
    DirectMetrics,
    PairwiseBaselines,
    PairwiseMetrics,
)

CORRELATION_DIMENSIONS = ("naturalness", "coherence", "engagingness", "groundedness")
# The code of "no label" (an item whose verdicts all failed): it never equals a human label.
NO_LABEL = len(LABELS)


def label_codes(labels: Sequence[str | None]) -> np.ndarray:
    """Label indices in ``LABELS``; None (no label) is ``NO_LABEL``."""
    codes = [NO_LABEL if label is None else LABELS.index(label) for label in labels]
    return np.asarray(codes, dtype=np.int64)


def chance_agreement(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Kappa's chance agreement p_e of label codes: the agreement of independent draws from the
    two sides' label frequencies (0.0 on empty input)."""
    n = len(truth)
    if n == 0:
        return 0.0
    k = NO_LABEL + 1
    return float(np.dot(np.bincount(truth, minlength=k), np.bincount(predicted, minlength=k))) / (n * n)


def kappa_from_codes(truth: np.ndarray, predicted: np.ndarray) -> float:
    """Unweighted Cohen's kappa of label codes (``NO_LABEL`` is a category of its own)."""
    if len(truth) == 0:
        return 0.0
    observed, chance = float(np.mean(truth == predicted)), chance_agreement(truth, predicted)
    if chance >= 1.0:
        return 1.0 if observed == 1.0 else 0.0
    return (observed - chance) / (1.0 - chance)


def accuracy(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Share of positions where prediction equals truth (0.0 on empty input)."""
    if len(truth) == 0:
        return 0.0
    return sum(t == p for t, p in zip(truth, predicted, strict=True)) / len(truth)


def cohen_kappa(truth: Sequence[str], predicted: Sequence[str]) -> float:
    """Unweighted Cohen's kappa over the three labels A, B, tie."""
    return kappa_from_codes(label_codes(truth), label_codes(predicted))


def _pair_replicates(replicates: np.ndarray, column: int) -> np.ndarray:
    return replicates[:, column] if len(replicates) else replicates


def _resampled(n: int, groups: Sequence[str] | None, unit: str) -> str:
    return f"{len(set(groups))} {unit}" if groups is not None else f"{n} items"


def agreement_replicates(
    truth: np.ndarray, predicted: np.ndarray, samples: Sequence[np.ndarray]
) -> np.ndarray:
    """Accuracy and kappa of every resample of label codes (rows: ``samples``).

    Resamples of one size are computed together as arrays (the values of ``kappa_from_codes``
    and the mean, which the tests compare); clusters of unequal size one by one."""
    if not samples:
        return np.empty((0,))
    if len({len(idx) for idx in samples}) > 1:
        return np.asarray(
            [
                (float(np.mean(truth[i] == predicted[i])), kappa_from_codes(truth[i], predicted[i]))
                for i in samples
            ]
        )
    t, p = truth[np.asarray(samples)], predicted[np.asarray(samples)]  # (resamples, n)
    n = t.shape[1]
    observed = np.mean(t == p, axis=1)
    codes = np.arange(NO_LABEL + 1)
    counts_t = np.sum(t[:, :, None] == codes, axis=1)
    counts_p = np.sum(p[:, :, None] == codes, axis=1)
    chance = np.sum(counts_t * counts_p, axis=1) / (n * n)
    with np.errstate(invalid="ignore", divide="ignore"):
        kappa = np.where(
            chance >= 1.0, np.where(observed == 1.0, 1.0, 0.0), (observed - chance) / (1.0 - chance)
        )
    return np.stack([observed, kappa], axis=1)


def pairwise_metrics(
    truth: Sequence[str],
    predicted: Sequence[str | None],
    seed: int = 0,
    groups: Sequence[str] | None = None,
    unit: str = "groups",
) -> PairwiseMetrics:
    """Accuracy and kappa of predicted labels against human labels, with CIs.

    A predicted None (no label) counts as wrong. ``groups`` (each row's group, e.g. the item
    of each of several referees' rows): resample whole groups, described as ``"<k> <unit>"``.
    """
    t, p = label_codes(truth), label_codes(predicted)
    acc, kappa = (float(np.mean(t == p)) if len(t) else 0.0), kappa_from_codes(t, p)
    reps = agreement_replicates(t, p, resample_indices(len(t), seed, groups))
    clusters = None if groups is None else len(set(groups))
    return {
        "n": len(t),
        "no_label": int(np.sum(p == NO_LABEL)),
        "resampled": _resampled(len(t), groups, unit),
        "label_counts": {
            "human": {label: list(truth).count(label) for label in LABELS},
            "predicted": {label: list(predicted).count(label) for label in LABELS},
        },
        "accuracy": accuracy_interval(acc, len(t), _pair_replicates(reps, 0), clusters),
        "kappa": kappa_interval(
            kappa, acc, chance_agreement(t, p), len(t), _pair_replicates(reps, 1), clusters
        ),
    }


def pairwise_baselines(truth: Sequence[str]) -> PairwiseBaselines:
    """What judges that read nothing score on these human labels: always "A", always the most
    common human label (ties go to the first of A, B, tie), and a uniform random label, whose
    expected accuracy is 1/3 and expected kappa 0 whatever the labels."""
    t = label_codes(truth)
    counts = np.bincount(t, minlength=len(LABELS))
    majority = int(np.argmax(counts))  # argmax takes the first of equal counts

    def constant(code: int) -> tuple[float, float]:
        predicted = np.full(len(t), code)
        return (float(np.mean(t == predicted)) if len(t) else 0.0), kappa_from_codes(t, predicted)

    always_a, majority_score = constant(LABELS.index("A")), constant(majority)
    return {
        "n": len(t),
        "always_A": {"accuracy": always_a[0], "kappa": always_a[1]},
        "majority": {"label": LABELS[majority], "accuracy": majority_score[0], "kappa": majority_score[1]},
        "random": {"accuracy": 1 / 3, "kappa": 0.0},
    }


def _mean_correlations(
    dimensions: Sequence[str],
    values: Mapping[str, tuple[float, float] | None],
    replicates: Mapping[str, np.ndarray],
    left_out: Mapping[str, str],
    units: tuple[int, int],
) -> AverageCorrelations:
    """The mean of ``dimensions``' correlations (every one defined), ``left_out`` named. A
    resample where one averaged dimension is undefined is undefined for the average too:
    averaging the rest would make each resample a different statistic."""
    none_defined = "no averaged dimension's correlation is defined"
    out: AverageCorrelations = {
        "dimensions": list(dimensions),
        "spearman": correlation_interval(None, np.empty(0), *units, none_defined),
        "kendall": correlation_interval(None, np.empty(0), *units, none_defined),
    }
    if left_out:
        out["left_out"] = dict(left_out)
    pairs = [pair for d in dimensions if (pair := values[d]) is not None]
    if pairs and len(pairs) == len(dimensions):
        mean_value = np.mean(pairs, axis=0)
        mean_reps = np.mean([replicates[d] for d in dimensions], axis=0)  # NaN in any: undefined
        out["spearman"] = correlation_interval(float(mean_value[0]), _pair_replicates(mean_reps, 0), *units)
        out["kendall"] = correlation_interval(float(mean_value[1]), _pair_replicates(mean_reps, 1), *units)
    return out


def _averages(
    names: Sequence[str],
    values: Mapping[str, tuple[float, float] | None],
    replicates: Mapping[str, np.ndarray],
    reasons: Mapping[str, str],
    units: tuple[int, int],
) -> tuple[AverageCorrelations, AverageCorrelations | None]:
    """The average over ``names`` as the paper reports it, and, when some are undefined, the
    average over the defined ones (None when all or none are defined).

    The paper's average is over all its dimensions: when one of them is undefined (a constant
    prediction), so is the average, with that dimension's reason. An average of the rest is
    another statistic (one whose dimensions depend on the run), so it goes under its own name,
    listing the dimensions it covers, never under the paper's.
    """
    undefined = {d: reasons[d] for d in names if values[d] is None}
    paper = _mean_correlations(names, values, replicates, undefined, units)
    if undefined:
        by_reason: dict[str, list[str]] = {}  # four constant dimensions: one reason, said once
        for d, why in undefined.items():
            by_reason.setdefault(why, []).append(d)
        reason = "; ".join(f"{', '.join(dims)}: {why}" for why, dims in by_reason.items())
        paper["spearman"] = correlation_interval(None, np.empty(0), *units, reason)
        paper["kendall"] = correlation_interval(None, np.empty(0), *units, reason)
    defined = [d for d in names if d not in undefined]
    if not undefined or not defined:
        return paper, None
    return paper, _mean_correlations(defined, values, replicates, undefined, units)


def direct_metrics(
    truth: Mapping[str, Sequence[float]],
    predicted: Mapping[str, Sequence[float]],
    seed: int = 0,
    groups: Mapping[str, Sequence[str]] | None = None,
    unit: str = "groups",
) -> DirectMetrics:
    """Per-dimension Spearman and Kendall with CIs, and their average over the paper's four
    dimensions (all scored dimensions when none of the four is present): ``average``, undefined
    (with the reason) when any of them is undefined, and then ``average_defined`` over the
    defined ones, naming those it covers (``_averages``). The average needs every averaged
    dimension scored on the same items: each resample then uses the same item indices for
    every dimension, so the average's replicates are the mean of theirs.

    ``groups`` (per dimension, each row's group): resample whole groups (cluster bootstrap),
    described as ``"<k> <unit>"``.
    """
    dimensions: dict[str, Correlations] = {}
    values: dict[str, tuple[float, float] | None] = {}
    replicates: dict[str, np.ndarray] = {}
    reasons: dict[str, str] = {}
    units: dict[str, tuple[int, int]] = {}  # the items or groups resampled, and the rows
    for d in truth:
        t, p = np.asarray(truth[d], dtype=float), np.asarray(predicted[d], dtype=float)
        units[d] = (len(set(groups[d])) if groups else len(t)), len(t)
        value = correlation_or_nan(t, p)
        replicates[d] = correlation_replicates(
            t, p, resample_indices(len(t), seed, groups[d] if groups else None)
        )
        reasons[d] = undefined_reason(t, p) or ""
        pair = values[d] = None if reasons[d] else value
        rho, tau = (None, None) if pair is None else pair
        dimensions[d] = {
            "n": len(t),
            "spearman": correlation_interval(rho, _pair_replicates(replicates[d], 0), *units[d], reasons[d]),
            "kendall": correlation_interval(tau, _pair_replicates(replicates[d], 1), *units[d], reasons[d]),
        }
    resampled = _resampled(0, next(iter(groups.values())), unit) if groups and truth else "items"
    out: DirectMetrics = {"dimensions": dimensions, "resampled": resampled}
    averaged = [d for d in truth if d in CORRELATION_DIMENSIONS] or list(truth)
    if averaged and len({len(truth[d]) for d in averaged}) == 1:
        out["average"], defined = _averages(averaged, values, replicates, reasons, units[averaged[0]])
        if defined is not None:
            out["average_defined"] = defined
    return out
