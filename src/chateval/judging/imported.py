"""The verdict record of a comparison another tool judged (``chateval import``), in the shape a
debate's has (chateval.judging.aggregate), so that every statistic, report and export reads it
as any run's.

The imported judge is one referee. Each answer order it judged is an order record with its
winner in A/B terms and ``winner_shown`` in the order's own terms ("1": the answer shown
first); a verdict read on a numeric scale keeps its position as ``share_a`` (A's share of the
win), and one of an import with weights its ``weight`` (how many times its source counts it).
It gave no scores: its rows have none, and neither has the record. A verdict it did not give
(a value mapped to skip, a null one skipped) is a failed verdict, with the value as its raw
text; as in a debate, the referee is then left out of the item's decision, so a failure cannot
tilt the item toward the answer that happened to be shown first in the order that stood. Each
order's label is the verdict given in it (None where none was): an order is one game of the
source's own count (JudgeBench scores the order that stood, Arena-Hard counts games). Judged
in both orders, the item's decision sums the two verdicts (a win counts 1 for its answer, a
tie nothing): the same winner twice or a winner and a tie give that winner, opposite winners a
tie, which is what summing a debate's scores over both orders (FairEval's BPC) gives for
one-point verdicts.
"""

from chateval.core.items import PairwiseItem
from chateval.data.judgments import Judgment
from chateval.data.verdict_values import Verdict
from chateval.schema.base import Label
from chateval.schema.verdicts import OrderRecord, RefereeRow, VerdictRecord


def _shown(winner: Label, swapped: bool) -> str:
    """The winner as the order showed it: "1" the answer shown first, "2" the second."""
    if winner == "tie":
        return "tie"
    first_is_a = not swapped
    return "1" if (winner == "A") == first_is_a else "2"


def _row(referee: str, verdict: Verdict, swapped: bool) -> RefereeRow:
    if verdict.label is None:
        return {
            "agent": referee,
            "error": f"no verdict: value {verdict.raw!r} is skipped",
            "raw": verdict.raw,
        }
    shown = _shown(verdict.label, swapped)
    row: RefereeRow = {"agent": referee, "winner": verdict.label, "winner_shown": shown}
    if verdict.share_a is not None:
        row["share_a"] = round(verdict.share_a, 6)
    if verdict.weight is not None:
        row["weight"] = verdict.weight
    return row


def _summed(labels: list[Label]) -> Label:
    """The decision of one-point verdicts summed over the answer orders."""
    total = sum({"A": 1, "B": -1, "tie": 0}[label] for label in labels)
    return "A" if total > 0 else "B" if total < 0 else "tie"


def imported_record(judgment: Judgment, item: PairwiseItem, referee: str, texts: bool) -> VerdictRecord:
    """The verdict record of ``item`` as ``judgment`` judged it, by the one ``referee``
    (module doc); ``texts``: the item carries its answers (their lengths in words are recorded)."""
    verdicts = sorted(judgment.verdicts, key=lambda given: given[0])  # the original order first
    failed = any(v.label is None for _, v in verdicts)
    orders: list[OrderRecord] = [
        {"swapped": swapped, "label": verdict.label, "referees": [_row(referee, verdict, swapped)]}
        for swapped, verdict in verdicts
    ]
    labels = [v.label for _, v in verdicts if v.label is not None]
    label = None if failed else _summed(labels)
    record: VerdictRecord = {
        "item_id": item.id,
        "orders": orders,
        "referee_labels": {} if label is None else {referee: label},
        "parse_failures": sum(1 for _, v in verdicts if v.label is None),
        "excluded_referees": [referee] if failed else [],
        "label": label,
        "human_label": item.label,
        "prompt": judgment.prompt,
    }
    if item.system_a is not None and item.system_b is not None:  # none: the prompt names the comparison
        record["system_a"] = item.system_a
        record["system_b"] = item.system_b
    if texts:
        record["words_a"] = len(item.answer_a.split())
        record["words_b"] = len(item.answer_b.split())
    if item.category is not None:
        record["category"] = item.category
    return record
