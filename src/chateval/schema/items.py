"""items.jsonl: an ``ItemRecord`` per item, exactly as the run's debates showed it."""

from typing import Literal, Required

from typing_extensions import TypedDict

from chateval.schema.base import Label, record_schema


@record_schema
class EarlierTurnRecord(TypedDict):
    """A conversation's turn before the judged one (chateval.core.items.EarlierTurn)."""

    question: str
    answer_a: str
    answer_b: str


@record_schema
class ItemRecord(TypedDict, total=False):
    """One line of items.jsonl: an item exactly as its debates showed it (cut to fit the models'
    contexts where the run had to; its verdict record's ``truncated`` says where), with its human
    labels or scores and the systems it names (chateval.core.items)."""

    kind: Required[Literal["pairwise", "direct"]]
    id: Required[str]
    # pairwise
    question: str
    answer_a: str
    answer_b: str
    label: Label | None
    system_a: str | None
    system_b: str | None
    prompt: str | None
    # direct
    context: str
    response: str
    knowledge: str
    scores: dict[str, float]
    group: str | None
    system: str | None
    category: str  # both kinds; absent when the data has no categories
    earlier: list[EarlierTurnRecord]  # pairwise, the turns before the judged one (data.turn)
    earlier_left_out: int  # of those, the first ones cut to fit a model's context
