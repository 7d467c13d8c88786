"""``chateval compare``'s comparison of two judges of the same items, and of two leaderboards
of the same systems (chateval.evaluation.agreement.judges)."""

from typing import NotRequired

from typing_extensions import TypedDict

from chateval.schema.agreement import DirectMetrics, PairwiseMetrics
from chateval.schema.base import record_schema
from chateval.schema.paired import DirectComparison, PairwiseComparison


@record_schema
class Difference(TypedDict):
    """An item the two judges decided differently."""

    item_id: str
    a: str  # judge A's decision: a label, or ``dimension score`` pairs
    b: str
    human: str | None
    gap: float  # the size of the disagreement (see the module doc)


@record_schema
class JudgeComparison(TypedDict):
    """Two judges on the items both judged (module doc)."""

    task: str
    shared: int  # items both judged
    only_a: int  # items A judged and B lacks, left out of every figure here
    only_b: int  # items B judged and A lacks
    decided: int  # of those, items both decided (pairwise: a label; direct: scores)
    between: PairwiseMetrics | DirectMetrics | None  # B against A as the reference; None: none decided
    identical: float | None  # the share of identical decisions (direct: of equal scores)
    humans: PairwiseComparison | DirectComparison | None  # paired, on the human-labelled items
    differences: int  # items decided differently
    most_different: list[Difference]


@record_schema
class BoardComparison(TypedDict):
    """Two leaderboards of the same systems side by side (``compare_boards``)."""

    systems: list[str]  # the systems both rank, in A's order
    ranks: dict[str, list[int]]  # system -> [rank in A, rank in B]
    tau: float | None  # Kendall's tau-b between the two boards' ratings; None: undefined
    pairs: int  # pairs of systems
    same_order: int  # pairs both boards order alike (a tie in either counts as not alike)
    resolved_both: int  # pairs both boards resolve (all pairs' intervals holding at once), same way
    resolved_opposite: int  # pairs the boards resolve in opposite directions
    # Where the tau of the two judges' orders with unlimited prompts lies (``tau_bounds``);
    # absent in comparisons written before it
    tau_bounds: NotRequired[list[float]]
