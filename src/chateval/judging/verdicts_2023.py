"""ChatEval's 2023 rule for its own outputs (``chateval import``, ``format: chateval_2023``): each
referee's last reply read as the 2023 code read it, and the panel's decision as its FairEval
configs made it.

A reply's scores are the numbers after ``The score of Assistant 1:`` on its second-to-last line
and after ``The score of Assistant 2:`` on its last line (lines split at ``\\n``, the text as it
is: a trailing newline leaves an empty last line), parsed as Python's ``float`` parses them
(7.5 allowed; no range check). A line without the marker is parsed whole. A reply that does
not parse is a failed verdict, with its text as raw; a number that is not finite (``nan``,
``inf``) is one too (the 2023 code would have lost the item from its list of predictions).

The decision is the paper's (position calibration, BPC): each answer's scores summed over the
referees and the answer orders, the larger sum wins, equal sums tie; an item with any failed
verdict, in either order, is a tie (the 2023 code's ``except``: ``predictions.append("tie")``).
The record has the shape of a debate's with ``verdict.on_failure: tie``
(chateval.judging.aggregate.aggregate_pairwise): the failed referees left out of the orders'
majorities and of the summed scores, and named in ``excluded_referees``.
"""

import math
from collections.abc import Sequence

from chateval.core.items import PairwiseItem
from chateval.data.chateval_outputs import Reply
from chateval.errors import VerdictError
from chateval.judging.aggregate import add_pairwise_item, majority_label, pairwise_winner, sum_label
from chateval.judging.formats import PairwiseVerdict, Score
from chateval.schema.base import Label
from chateval.schema.verdicts import OrderRecord, RefereeRow, VerdictRecord

MARKERS = ("The score of Assistant 1:", "The score of Assistant 2:")


def _number(line: str, marker: str) -> Score:
    """The number after ``marker`` on ``line`` (the whole line without it), as ``float`` reads
    it; whole numbers as integers."""
    try:
        value = float(line.split(marker)[-1])
    except ValueError:
        raise VerdictError(f"no score after {marker!r}: {line[-80:]!r}") from None
    if not math.isfinite(value):
        raise VerdictError(f"score {value} after {marker!r} is not a number to add up")
    return int(value) if value.is_integer() else value


def parse_2023(text: str) -> PairwiseVerdict:
    """The scores of Assistant 1 and 2 in a reply, by the 2023 rule (module doc); VerdictError
    when they cannot be read."""
    lines = text.split("\n")
    if len(lines) < 2:
        raise VerdictError("the reply has one line, not the two score lines")
    first, second = (_number(line, marker) for line, marker in zip(lines[-2:], MARKERS, strict=True))
    return PairwiseVerdict(first, second, evidence="")


def _assessment(text: str) -> str:
    """What the referee wrote before its two score lines."""
    return "\n".join(text.split("\n")[:-2]).strip()


def _row(reply: Reply, swapped: bool) -> tuple[RefereeRow, PairwiseVerdict | None]:
    try:
        verdict = parse_2023(reply.text)
    except VerdictError as exc:
        return {"agent": reply.role, "error": str(exc), "raw": reply.text}, None
    score_a, score_b = (verdict.score_2, verdict.score_1) if swapped else (verdict.score_1, verdict.score_2)
    row: RefereeRow = {
        "agent": reply.role,
        "score_a": score_a,
        "score_b": score_b,
        "winner": pairwise_winner(verdict, swapped),
        "winner_shown": verdict.winner_shown,
        "assessment": _assessment(reply.text),
    }
    return row, verdict


def record_2023(item: PairwiseItem, orders: Sequence[tuple[bool, Sequence[Reply]]]) -> VerdictRecord:
    """The verdict record of ``item`` from its referees' replies in each answer order
    (``swapped``: B's answer shown as Assistant 1), decided by the paper's rule (module doc)."""
    rows = [(swapped, [_row(reply, swapped) for reply in replies]) for swapped, replies in orders]
    failed = {row["agent"] for _, order in rows for row, verdict in order if verdict is None}
    counted = [
        row
        for _, order in rows
        for row, verdict in order
        if verdict is not None and row["agent"] not in failed
    ]
    order_records: list[OrderRecord] = [
        {
            "swapped": swapped,
            "label": majority_label(
                [
                    row["winner"]
                    for row, verdict in order
                    if verdict is not None and row["agent"] not in failed
                ]
            ),
            "referees": [row for row, _ in order],
        }
        for swapped, order in rows
    ]
    referee_labels: dict[str, Label] = {}
    for agent in dict.fromkeys(row["agent"] for row in counted):
        mine = [row for row in counted if row["agent"] == agent]
        referee_labels[agent] = sum_label(sum(r["score_a"] for r in mine), sum(r["score_b"] for r in mine))
    score_a = sum(row["score_a"] for row in counted)
    score_b = sum(row["score_b"] for row in counted)
    label: Label | None = "tie" if failed else sum_label(score_a, score_b) if counted else None
    record: VerdictRecord = {
        "item_id": item.id,
        "orders": order_records,
        "referee_labels": referee_labels,
        "parse_failures": sum(1 for _, order in rows for _, verdict in order if verdict is None),
        "excluded_referees": sorted(failed),
        "score_a": score_a,
        "score_b": score_b,
        "label": label,
    }
    add_pairwise_item(record, item)
    if item.category is not None:
        record["category"] = item.category
    return record
