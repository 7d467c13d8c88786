"""Soft verdicts against hard ones on the same items, as a registered measure
(chateval.evaluation.measures) at metrics.json's ``soft_vs_hard``: the paired comparison
(chateval.evaluation.agreement.paired) with the hard verdicts as A and the soft ones as B, so
that soft's gap over hard is read against its noise. Runs without soft verdicts, or without
human labels to compare them with, have none.
"""

from collections.abc import Sequence
from typing import Any

from chateval.core.formatting import signed_ci
from chateval.evaluation.agreement.paired import compare_direct_records, compare_pairwise_records
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.paired import DirectComparison, PairwiseComparison
from chateval.schema.verdicts import VerdictRecord


def as_soft(record: VerdictRecord) -> VerdictRecord:
    """The record with its soft label and scores as its verdict."""
    soft = record.copy()
    soft["label"] = record.get("soft_label")
    soft["scores"] = record.get("soft_scores")
    return soft


def has_soft_agreement(records: Sequence[VerdictRecord], task: str) -> bool:
    """The soft verdicts have an agreement with humans: pairwise, some soft label and some
    human label; direct, an item with soft and human scores on a shared dimension."""
    if task == "pairwise":
        return any(r.get("soft_label") for r in records) and any(r.get("human_label") for r in records)
    return any(set(r.get("soft_scores") or {}) & set(r.get("human_scores") or {}) for r in records)


class SoftVsHard:
    """Soft minus hard on the same items (module doc)."""

    name = "soft_vs_hard"
    title = "soft minus hard, same items"
    top_level = True

    def compute(
        self, settings: StatisticsSettings, records: Sequence[VerdictRecord]
    ) -> PairwiseComparison | DirectComparison | None:
        if not has_soft_agreement(records, settings.task):
            return None
        softened = [as_soft(r) for r in records]
        if settings.task == "pairwise":
            return compare_pairwise_records(records, softened)
        return compare_direct_records(records, softened, settings.seed)

    def text(self, section: Any) -> str:
        """Pairwise: the accuracy difference and McNemar's p; direct: the average Spearman's
        difference."""
        if not section:
            return "-"
        if "mcnemar" in section:
            difference, p_value = section["accuracy"]["difference"], section["mcnemar"]["p_value"]
            return f"accuracy {signed_ci(difference)}, McNemar p = {p_value:.3f}"
        spearman = (section.get("average") or {}).get("spearman")
        return "average spearman " + signed_ci(spearman["difference"] if spearman else None)


SOFT_VS_HARD = SoftVsHard()
