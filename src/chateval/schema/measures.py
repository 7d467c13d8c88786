"""The sections of metrics.json's ``measures`` that chateval's own measures fill: each measure
names its section's type (its ``schema``), and the record validates the section against it on
read (a measure from another package names its own type the same way)."""

from typing import Literal, NotRequired, Required

from typing_extensions import TypedDict

from chateval.schema.agreement import AgreementInterval, DirectMetrics, PairwiseMetrics
from chateval.schema.base import record_schema
from chateval.schema.systems import DirectSystems, PairWinRate, SystemWinRate


@record_schema
class JudgeBenchOrders(TypedDict):
    """The JudgeBench accuracy of each answer order alone."""

    original: AgreementInterval
    swapped: AgreementInterval


@record_schema
class JudgeBenchSection(TypedDict, total=False):
    """``measures.judgebench`` (chateval.evaluation.agreement.judgebench): both answer orders
    scored against the label; only ``pairs`` and ``unavailable`` (why) when none could be."""

    pairs: Required[int]
    unavailable: str
    right: int
    accuracy: AgreementInterval
    by_order: JudgeBenchOrders
    sums: dict[str, int]  # comparisons by their two orders' points summed, "2" to "-2"
    tie_labels: int  # comparisons labelled a tie, left out


@record_schema
class UnanimitySection(TypedDict):
    """``measures.unanimity`` (chateval.evaluation.diagnostics.unanimity): items whose every
    referee's verdict parsed, and of them those where all agree."""

    items: int
    unanimous: int
    share: float


@record_schema
class CategoryRow(SystemWinRate, total=False):
    """A system's record within one category, with its rating on the category's comparisons
    alone (absent when they cannot be fitted: ``leaderboard_error`` says why)."""

    rank: int
    rating: float
    rating_ci95: list[float]


@record_schema
class CategorySystems(TypedDict):
    """A category's systems of a pairwise run: each against the field (``rows``) and each pair
    of them (``pairs``; with the run's ``baseline`` among them, every pair with it names it
    second: the other system's win rate against the baseline)."""

    anchor: str
    rows: list[CategoryRow]
    leaderboard_error: str | None
    interval_method: NotRequired[str]  # the ratings' (absent when they could not be fitted)
    pairs: NotRequired[list[PairWinRate]]  # absent: scored by an earlier release (rescore adds it)
    baseline: NotRequired[str]  # the run's baseline (compare: {against: X}), when in the category


@record_schema
class CategoryEntry(TypedDict):
    """One category: its items, the panel's agreement with the humans on them (None: no human
    label) and its systems (None: fewer than two, or none scored)."""

    category: str
    items: int
    agreement: PairwiseMetrics | DirectMetrics | None
    systems: CategorySystems | DirectSystems | None


@record_schema
class CategoriesSection(TypedDict):
    """``measures.categories`` (chateval.evaluation.categories): every figure per category."""

    verdicts: Literal["hard", "soft"]  # the headline verdicts the figures rest on
    categories: list[CategoryEntry]


@record_schema
class VerdictWinRate(TypedDict):
    """One system against one opponent, counted by verdict (each answer order's verdict a game,
    with its weight; chateval.evaluation.systems.verdict_win_rates)."""

    system: str
    opponent: str
    comparisons: int  # the comparisons counted (every verdict given)
    verdicts: int  # their verdicts, one per answer order judged
    weight: float  # the verdicts' weights summed (their number, without weights)
    wins: int  # verdicts, from the system's side, unweighted
    ties: int
    losses: int
    win_rate: float  # sum of weight x (1 win, 0.5 tie, 0 loss) / sum of weights
    soft_win_rate: float | None  # the same with each verdict's position on its scale; None: none on one


@record_schema
class VerdictWinRatesSection(TypedDict):
    """``measures.verdict_win_rates``: the imported verdicts' win rates as their source counts
    them, and the comparisons left out (a verdict the judge did not give)."""

    rows: list[VerdictWinRate]
    left_out: int
