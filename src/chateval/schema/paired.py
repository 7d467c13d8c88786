"""metrics.json's paired comparisons: two sides' verdicts on the same items (soft against hard
verdicts, one run against another, two judges) with the difference's interval, and the
debate's effect (the referees' blind opinions against the panel's final decision)."""

from typing import Generic, NotRequired, Required, TypeVar

from typing_extensions import TypedDict

from chateval.schema.agreement import CorrelationInterval, Interval
from chateval.schema.base import record_schema


@record_schema
class PairedScore(TypedDict):
    """A statistic of two runs on the same items, and the difference B - A with its interval."""

    a: float
    b: float
    difference: Interval


@record_schema
class McNemar(TypedDict):
    """The exact McNemar test on the items only one of two runs got right."""

    a_only_right: int
    b_only_right: int
    p_value: float


@record_schema
class BlindFinalScore(TypedDict):
    """``PairedScore`` of the blind vote (A) against the final decision (B)."""

    blind: float
    final: float
    difference: Interval


@record_schema
class BlindFinalMcNemar(TypedDict):
    blind_only_right: int
    final_only_right: int
    p_value: float


@record_schema
class PairedCorrelation(TypedDict):
    """A correlation of two runs (None: undefined) and the difference B - A."""

    a: float | None
    b: float | None
    difference: CorrelationInterval


@record_schema
class BlindFinalCorrelation(TypedDict):
    """``PairedCorrelation`` of the blind vote (A) against the final decision (B)."""

    blind: float | None
    final: float | None
    difference: CorrelationInterval


Score = TypeVar("Score", bound=PairedScore | BlindFinalScore)


Test = TypeVar("Test", bound=McNemar | BlindFinalMcNemar)


Paired = TypeVar("Paired", bound=PairedCorrelation | BlindFinalCorrelation)


@record_schema
class PairwiseComparisonOf(TypedDict, Generic[Score, Test]):
    """Two sides' labels on the same items (chateval.evaluation.agreement.paired): accuracy,
    kappa, McNemar."""

    n: int
    accuracy: Score
    kappa: Score
    mcnemar: Test


@record_schema
class PairedCorrelations(TypedDict, Generic[Paired]):
    spearman: Paired
    kendall: Paired


@record_schema
class PairedAverage(TypedDict, Generic[Paired], total=False):
    """The average over the dimensions defined for both sides (none: no spearman, kendall)."""

    dimensions: Required[list[str]]
    left_out: dict[str, str]  # dimensions undefined for a side: why
    spearman: Paired
    kendall: Paired


@record_schema
class DirectComparisonOf(TypedDict, Generic[Paired]):
    """Two sides' scores on the same items (chateval.evaluation.agreement.paired), per
    dimension and averaged."""

    n: int
    resampled: str
    dimensions: dict[str, PairedCorrelations[Paired]]
    average: NotRequired[PairedAverage[Paired]]  # absent without dimensions


PairwiseComparison = PairwiseComparisonOf[PairedScore, McNemar]


DirectComparison = DirectComparisonOf[PairedCorrelation]


BlindFinalPairwise = PairwiseComparisonOf[BlindFinalScore, BlindFinalMcNemar]


BlindFinalDirect = DirectComparisonOf[BlindFinalCorrelation]


@record_schema
class DebateEffect(TypedDict, total=False):
    """metrics.json ``debate_effect`` (runs with opinion probes; a panel of several referees
    without them records ``unavailable`` and zero counts): the referees' blind opinions
    before any discussion, combined like the final verdicts, against the panel's final
    decision on the same items (hard verdicts). ``comparison`` (in the task's class below) is
    chateval.evaluation.agreement.paired's paired comparison with the blind decision as ``blind`` and the
    final one as ``final``."""

    blind_rule: str  # absent when not measured (``unavailable`` says why)
    items: Required[int]  # items with both a blind and a final decision
    left_out: Required[int]  # items lacking one of them (every probe or verdict failed)
    changed: Required[int]  # items whose decision the discussion changed
    unavailable: str  # why there is no comparison (then only counts, and blind_rule if probed)


@record_schema
class PairwiseDebateEffect(DebateEffect, total=False):
    comparison: BlindFinalPairwise | None  # vs humans, paired; None without human labels


@record_schema
class DirectDebateEffect(DebateEffect, total=False):
    blind_vs_final_spearman: dict[str, float | None]  # per dimension
    comparison: BlindFinalDirect | None  # vs humans, paired; None without human labels
