"""The panel's agreement with the human labels on a set of verdict records, hard or soft: the
run's headline (chateval.evaluation.run_metrics) and each category's
(chateval.evaluation.categories) are the same statistic on different records.

Pairwise: accuracy and kappa over the human-labelled items, an item the panel could not decide
counting as wrong. Direct: Spearman and Kendall per dimension over the items with both scores,
whole groups resampled when every item has one (Topical-Chat's dialogues).
"""

from collections.abc import Callable, Mapping, Sequence

from chateval.evaluation.agreement.metrics import direct_metrics, pairwise_metrics
from chateval.schema.agreement import DirectMetrics, PairwiseMetrics
from chateval.schema.base import Label
from chateval.schema.verdicts import VerdictRecord

# Per dimension: the human scores, the judged ones, and each item's group
Collected = tuple[dict[str, list[float]], dict[str, list[float]], dict[str, list[str]]]


def panel_label(record: VerdictRecord, soft: bool) -> Label | None:
    """The panel's label of a pairwise record, hard or soft."""
    return record.get("soft_label") if soft else record.get("label")


def panel_scores(record: VerdictRecord, soft: bool) -> dict[str, float] | None:
    """The panel's scores of a direct record, decoded or expected."""
    return record.get("soft_scores") if soft else record.get("scores")


def pairwise_panel(records: Sequence[VerdictRecord], seed: int, soft: bool) -> PairwiseMetrics | None:
    """The panel's accuracy and kappa on the human-labelled records; None without one."""
    labelled = [(human, panel_label(r, soft)) for r in records if (human := r.get("human_label"))]
    if not labelled:
        return None
    return pairwise_metrics([h for h, _ in labelled], [p for _, p in labelled], seed)


def collect_scores(
    records: Sequence[VerdictRecord], scores_of: Callable[[VerdictRecord], Mapping[str, float] | None]
) -> Collected:
    """Per dimension, the human and the judged scores of the records that have both."""
    truth: dict[str, list[float]] = {}
    predicted: dict[str, list[float]] = {}
    groups: dict[str, list[str]] = {}
    for r in records:
        scores, human = scores_of(r), r.get("human_scores")
        if not human or not scores:
            continue
        for name, value in scores.items():
            if name in human:
                truth.setdefault(name, []).append(human[name])
                predicted.setdefault(name, []).append(value)
                groups.setdefault(name, []).append(r.get("group", ""))
    return truth, predicted, groups


def correlations(records: Sequence[VerdictRecord], collected: Collected, seed: int) -> DirectMetrics:
    """``collected``'s rank correlations, a cluster bootstrap over groups when every record of
    ``records`` has a group."""
    truth, predicted, groups = collected
    grouped = all("group" in r for r in records)
    return direct_metrics(truth, predicted, seed, groups if grouped else None)


def direct_panel(records: Sequence[VerdictRecord], seed: int, soft: bool) -> DirectMetrics | None:
    """The panel's correlations with the human scores; None without an item scored by both."""
    collected = collect_scores(records, lambda r: panel_scores(r, soft))
    return correlations(records, collected, seed) if collected[0] else None
