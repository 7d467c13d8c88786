"""The records a run evaluates: pairwise items (two answers) and direct items (one response)."""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Label = Literal["A", "B", "tie"]
LABELS: tuple[Label, ...] = ("A", "B", "tie")


@dataclass(frozen=True)
class PairwiseItem:
    """A question and two answers; ``label`` is the human verdict when known."""

    id: str
    question: str
    answer_a: str
    answer_b: str
    label: Label | None = None


@dataclass(frozen=True)
class DirectItem:
    """A conversation context, an optional knowledge fact and the response to score.

    ``scores`` holds human scores per dimension when known. ``group`` names the cluster the
    item belongs to when several responses answer one context (Topical-Chat: 6 responses per
    dialogue); confidence intervals then resample whole groups.
    """

    id: str
    context: str
    response: str
    knowledge: str = ""
    scores: Mapping[str, float] = field(default_factory=dict)
    group: str | None = None


Item = PairwiseItem | DirectItem
