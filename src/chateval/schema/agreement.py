"""metrics.json's agreement with the human labels: a statistic with its interval, the pairwise
(accuracy, kappa) and direct (rank correlations) metrics, each aggregation's agreement (hard and
soft verdicts), the reference baselines and the answer order's effect (``position``)."""

from typing import Generic, Literal, NotRequired, Required, TypeVar

from typing_extensions import TypedDict

from chateval.schema.base import record_schema


@record_schema
class Interval(TypedDict):
    """A statistic and its 95% interval."""

    value: float
    ci95: list[float]


@record_schema
class AgreementInterval(Interval):
    """Accuracy or kappa with its 95% interval (chateval.evaluation.agreement.intervals),
    how it was computed (``method``; kappa's ends in ``+bc-bootstrap``, its interval also
    holding the bias-corrected bootstrap interval) and the effective number of labelled rows
    behind it (``effective_n``). Runs scored before these intervals have a percentile bootstrap
    interval and neither key."""

    method: NotRequired[
        Literal[
            "clopper-pearson",
            "clopper-pearson-clustered",
            "clopper-pearson+bc-bootstrap",
            "clopper-pearson-clustered+bc-bootstrap",
        ]
    ]
    effective_n: NotRequired[float]


@record_schema
class LabelCounts(TypedDict):
    human: dict[str, int]
    predicted: dict[str, int]


@record_schema
class PairwiseMetrics(TypedDict):
    """Agreement of predicted labels with human labels."""

    n: int  # labelled rows compared, those without a predicted label included (as wrong)
    no_label: NotRequired[int]  # rows without a predicted label (absent in older runs)
    resampled: NotRequired[str]  # what the bootstrap drew: "80 items", "80 items (clusters)"
    label_counts: LabelCounts
    accuracy: AgreementInterval
    kappa: AgreementInterval


@record_schema
class CorrelationInterval(TypedDict):
    """A rank correlation and its 95% interval. ``value`` is null when the
    correlation is undefined (a constant side, fewer than 2 pairs) and ``ci95`` when too few
    resamples are defined or there are fewer than 3 items or groups; ``reason`` says why.
    Older runs have value and ci95 only."""

    value: float | None
    ci95: list[float] | None
    resamples: NotRequired[int]  # bootstrap resamples drawn
    undefined_resamples: NotRequired[int]  # of them, where the correlation was undefined
    reason: NotRequired[str]
    # "fisher-z" (chateval.evaluation.agreement.intervals), "zou-fisher-z" (a paired difference,
    # release 6 on); absent: a percentile interval (runs scored before release 5, and paired
    # differences before release 6)
    method: NotRequired[Literal["fisher-z", "zou-fisher-z"]]


@record_schema
class Correlations(TypedDict):
    """Rank correlations of one dimension's predicted scores with the human ones."""

    n: int
    spearman: CorrelationInterval
    kendall: CorrelationInterval


@record_schema
class AverageCorrelations(TypedDict):
    """The mean of some dimensions' correlations. As ``average`` (the paper's): over its
    dimensions, undefined (value null, with the reason) when any of them is undefined; as
    ``average_defined``: over the dimensions whose correlation is defined, the others left out.
    Runs of earlier releases have only ``average``, over the defined dimensions."""

    dimensions: list[str]  # the dimensions averaged
    left_out: NotRequired[dict[str, str]]  # dimensions whose correlation is undefined: why
    spearman: CorrelationInterval
    kendall: CorrelationInterval


@record_schema
class DirectMetrics(TypedDict, total=False):
    """Per-dimension correlations, what was resampled, and their average (the paper's: every
    averaged dimension defined) and, when some are undefined, the average of the others."""

    dimensions: Required[dict[str, Correlations]]
    resampled: Required[str]
    average: AverageCorrelations
    average_defined: AverageCorrelations  # only when some averaged dimension is undefined


@record_schema
class DistributionStats(TypedDict, total=False):
    """How sure the referees of soft verdicts were, and how much of it rests on approximation
    (absent when no score came with probabilities)."""

    scores_read: int
    mean_entropy_bits: float
    mean_ambiguous: float
    mean_unmapped: float


Panel = TypeVar("Panel", bound=PairwiseMetrics | DirectMetrics)


@record_schema
class AgreementOf(DistributionStats, Generic[Panel], total=False):
    """One aggregation (hard or soft verdicts): the items it decided and (with human labels or
    scores) the panel's and each referee's agreement with them."""

    items_scored: int  # the first releases' metrics.json lack it (their hard agreement's count)
    panel: Panel  # absent without human labels
    referees: dict[str, Panel]


@record_schema
class PairwiseAgreement(AgreementOf[PairwiseMetrics], total=False):
    """One aggregation of a pairwise run, and the share of items it decided as a tie."""

    tie_share: float  # absent when no item was decided


@record_schema
class DirectAgreement(AgreementOf[DirectMetrics], total=False):
    """One aggregation of a direct run: correlations with the human scores."""


Agreement = TypeVar("Agreement", bound=PairwiseAgreement | DirectAgreement)


@record_schema
class Aggregations(TypedDict, Generic[Agreement]):
    """metrics.json ``aggregations``: the hard verdicts' agreement, and the soft ones' when read."""

    hard: Agreement
    soft: NotRequired[Agreement]


@record_schema
class BaselineScore(TypedDict):
    """A reference predictor's agreement with the human labels on the same items."""

    accuracy: float
    kappa: float


@record_schema
class MajorityBaseline(BaselineScore):
    label: str  # the most common human label (in-sample: it knows the labels it is scored on)


@record_schema
class PairwiseBaselines(TypedDict):
    """metrics.json ``baselines`` of a pairwise run: what a judge that reads nothing scores."""

    n: int
    always_A: BaselineScore
    majority: MajorityBaseline
    random: BaselineScore  # a uniform random label: expected values, 1/3 and 0


@record_schema
class DirectBaselines(TypedDict, total=False):
    """metrics.json ``baselines`` of a direct run: a constant predictor (undefined, with the
    reason) and the response's length in words as the prediction."""

    constant: Required[str]
    response_length: DirectMetrics
    response_length_unavailable: str


@record_schema
class PositionStats(TypedDict):
    """metrics.json ``position`` (pairwise): how the answer order moves the panel."""

    items_in_both_orders: int
    tie_in_both_orders: NotRequired[int]  # both orders' panel labels tie
    decisive_items: NotRequired[int]  # at least one order's panel label is not a tie
    decisive_consistency: NotRequired[float | None]  # of those, same winner in both orders
    decisive_flip_share: NotRequired[float | None]  # of those, the winner flips with the order
    consistency: NotRequired[float | None]  # older runs: both orders agree, tie/tie included
    decisive_verdicts: int
    first_position_win_share: float | None
    soft_mean_by_position: NotRequired[dict[str, float]]
