"""metrics.json as a whole (``PairwiseRunMetrics``, ``DirectRunMetrics``): the headline
agreement with the human labels, the systems section, and every measure's section (the
built-ins older than the measure registry at their top-level keys, the others under
``measures``)."""

from typing import Any, Generic, Literal, NotRequired, Required, TypeVar

from typing_extensions import TypedDict

from chateval.schema.agreement import (
    Aggregations,
    DirectAgreement,
    DirectBaselines,
    DirectMetrics,
    PairwiseAgreement,
    PairwiseBaselines,
    PairwiseMetrics,
    Panel,
    PositionStats,
)
from chateval.schema.base import record_schema
from chateval.schema.calibrated import CalibratedLeaderboard, CalibratedMean, CalibratedPair, LeftOutPair
from chateval.schema.diagnostics import DirectModelDiagnostics, PairwiseModelDiagnostics, PanelDiagnostics
from chateval.schema.paired import (
    DirectComparison,
    DirectDebateEffect,
    PairwiseComparison,
    PairwiseDebateEffect,
)
from chateval.schema.systems import AgainstBaseline, DirectSystems, Leaderboard, WinRates


@record_schema
class PairwiseSystems(TypedDict):
    """``metrics.json["systems"]`` of a pairwise run with systems."""

    task: Literal["pairwise"]
    comparisons: int
    undecided: int
    anchor: str
    win_rates: WinRates
    leaderboard: Leaderboard | None
    length_controlled: Leaderboard | None
    leaderboard_error: str | None
    calibrated: list[CalibratedPair]
    # Pairs with labels but no calibrated win rate, and why (none named before release 5).
    calibrated_left_out: list[LeftOutPair]
    # None with the reason beside it (both None: runs written before the calibrated leaderboard).
    calibrated_leaderboard: CalibratedLeaderboard | None
    calibrated_leaderboard_error: str | None
    # With a baseline (compare: {against: X}): each system's raw and length-controlled win rate
    # against it (runs before release 6 lack it).
    against_baseline: NotRequired[AgainstBaseline | None]


@record_schema
class DirectSystemsMetrics(TypedDict):
    """``metrics.json["systems"]`` of a direct run with systems."""

    task: Literal["direct"]
    responses: int
    unscored: int
    scores: DirectSystems
    calibrated: list[CalibratedMean]


@record_schema
class CommonRunMetrics(PanelDiagnostics, total=False):
    """The keys of metrics.json whatever the task (the task's class below adds the rest). Runs
    of earlier releases lack some: only ``items`` is always there."""

    items: Required[int]
    items_scored: int  # by the headline aggregation
    aggregation: str  # the headline: "hard", or "soft" when asked for and read
    soft_verdicts: str  # "read", or why not
    systems: PairwiseSystems | DirectSystemsMetrics  # runs that judged named systems
    # each registered measure's section, by its name (chateval.evaluation.measures): an open
    # mapping, so a measure added later leaves this type alone
    measures: dict[str, dict[str, Any]]


Effect = TypeVar("Effect", bound=PairwiseDebateEffect | DirectDebateEffect)


Model = TypeVar("Model", bound=PairwiseModelDiagnostics | DirectModelDiagnostics)


@record_schema
class RunMetricsOf(CommonRunMetrics, Generic[Panel, Effect, Model], total=False):
    """The keys whose type is the task's. ``panel`` and ``referees`` are the headline
    aggregation's (``aggregations`` has both; runs before soft verdicts have them only here)."""

    panel: Panel
    referees: dict[str, Panel]
    debate_effect: Effect  # runs with opinion probes, or a panel without them (``unavailable``)
    per_model: dict[str, Model]


@record_schema
class PairwiseRunMetrics(
    RunMetricsOf[PairwiseMetrics, PairwiseDebateEffect, PairwiseModelDiagnostics], total=False
):
    """metrics.json of a pairwise run."""

    aggregations: Aggregations[PairwiseAgreement]
    soft_vs_hard: PairwiseComparison | None  # A: hard, B: soft, on the same items
    baselines: PairwiseBaselines
    position: PositionStats


@record_schema
class DirectRunMetrics(RunMetricsOf[DirectMetrics, DirectDebateEffect, DirectModelDiagnostics], total=False):
    """metrics.json of a direct run (as ``PairwiseRunMetrics``, without position statistics)."""

    aggregations: Aggregations[DirectAgreement]
    soft_vs_hard: DirectComparison | None
    baselines: DirectBaselines


RunMetrics = PairwiseRunMetrics | DirectRunMetrics
