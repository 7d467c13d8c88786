"""A judge scored as JudgeBench scores judges, as a registered measure
(chateval.evaluation.measures) at metrics.json's ``measures.judgebench``.

Of the comparisons judged in both answer orders whose label names a winner (A or B), each
order's verdict (the panel's label in that order; one referee: its verdict) scores +1 when it
names the labelled winner, -1 when it names the other answer, 0 for a tie or no verdict; a
comparison is right when its two orders sum to more than 0 (Tan et al. 2024, "JudgeBench: A
Benchmark for Evaluating LLM-based Judges"). So a judge right in one order and tied in the
other is right, and one that flips with the order is wrong, where the headline accuracy (both
orders' scores summed into one decision) may call the flip a tie. Beside it, each order's own
accuracy on the same comparisons: how far apart they are is the answer order's pull.

Comparisons labelled tie are left out (no answer is the winner to match; JudgeBench's labels
never tie) and counted. The comparisons are taken as independent: each interval is the exact
binomial one (chateval.evaluation.agreement.intervals, Clopper-Pearson).
"""

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from chateval.core.formatting import ci_text
from chateval.evaluation.agreement.intervals import accuracy_interval
from chateval.evaluation.measures import Section
from chateval.evaluation.settings import StatisticsSettings
from chateval.schema.measures import JudgeBenchSection
from chateval.schema.verdicts import VerdictRecord

_OTHER = {"A": "B", "B": "A"}


def order_points(verdict: str | None, label: str) -> int:
    """One order's points: +1 the labelled winner, -1 the other answer, 0 a tie or no verdict."""
    if verdict == label:
        return 1
    return -1 if verdict == _OTHER[label] else 0


def _exact(right: int, n: int) -> dict[str, Any]:
    return dict(accuracy_interval(right / n, n, np.array([]), None))


class JudgeBenchScore:
    """Both answer orders scored against the label, right when the sum is positive (module doc)."""

    name = "judgebench"
    title = "JudgeBench score"
    schema = JudgeBenchSection  # its section's type: the record validates it on read

    def compute(self, settings: StatisticsSettings, records: Sequence[VerdictRecord]) -> Section | None:
        if settings.task != "pairwise":
            return None
        both = [r for r in records if len(r.get("orders") or []) == 2]
        if not both:
            return {"pairs": 0, "unavailable": "no comparison was judged in both answer orders"}
        labelled = [r for r in both if r.get("human_label") in _OTHER]
        ties = sum(1 for r in both if r.get("human_label") == "tie")
        if not labelled:
            why = "no comparison judged in both answer orders has a label naming a winner"
            return {"pairs": 0, "tie_labels": ties, "unavailable": why}
        sums: Counter[int] = Counter()
        right_by_order = {"original": 0, "swapped": 0}
        for record in labelled:
            label = str(record.get("human_label"))
            total = 0
            for order in record["orders"]:
                points = order_points(order["label"], label)
                total += points
                right_by_order["swapped" if order["swapped"] else "original"] += points == 1
            sums[total] += 1
        n = len(labelled)
        right = sum(count for total, count in sums.items() if total > 0)
        return {
            "pairs": n,
            "right": right,
            "accuracy": _exact(right, n),
            "by_order": {order: _exact(k, n) for order, k in right_by_order.items()},
            "sums": {str(total): sums[total] for total in (2, 1, 0, -1, -2)},
            "tie_labels": ties,
        }

    def text(self, section: Mapping[str, Any]) -> str:
        if section.get("unavailable"):
            return f"unavailable: {section['unavailable']}"
        by_order = section["by_order"]
        ties = section.get("tie_labels") or 0
        left_out = f"; {ties} labelled tie left out" if ties else ""
        return (
            f"{ci_text(section['accuracy'])} on {section['pairs']} comparisons judged in both orders "
            f"({section['right']} right; per order: original {ci_text(by_order['original'])}, "
            f"swapped {ci_text(by_order['swapped'])}){left_out}"
        )


JUDGEBENCH = JudgeBenchScore()
