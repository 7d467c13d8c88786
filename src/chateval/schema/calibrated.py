"""metrics.json's calibrated estimates of the systems (prediction-powered: the panel's
verdicts corrected by the human labels): each pair's win rate, each system's mean score, the
calibrated leaderboard, and what the labelled slice looks like."""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from chateval.schema.base import record_schema
from chateval.schema.systems import ProportionInterval

Quantile = Literal["t", "normal"]


@record_schema
class PPIMean(TypedDict):
    """A prediction-powered estimate of a mean beside the labelled-only and panel-only ones.

    ``effective_n`` is how many labelled items the classical estimate would need for a
    standard error as small as the PPI one, ``(classical se / PPI se)^2 * n`` (the intervals'
    widths' ratio squared, before any bounds), and ``gain`` that ratio alone (1: the panel
    added nothing); both None when the PPI standard error is 0 (a degenerate input).
    ``quantile`` is "normal" in runs written when the intervals were normal; ``warning`` is
    there only when fewer than ``FEW_LABELS`` items are labelled."""

    estimate: float
    ci: list[float]
    lam: float
    classical: float
    classical_ci: list[float]
    naive: float  # the panel's mean over all n + N items, uncorrected
    n: int
    N: int
    alpha: float
    effective_n: float | None
    gain: float | None
    quantile: Quantile
    warning: NotRequired[str]


@record_schema
class CalibratedPair(PPIMean):
    """The calibrated win rate of ``system_a`` over ``system_b`` (ties half)."""

    system_a: str
    system_b: str
    predictions: str  # "hard" or "soft": which panel verdicts served as predictions
    # of n + N, the comparisons the panel did not decide: predicted a tie (release 7 on; before,
    # they were left out, labels and all)
    undecided: NotRequired[int]


@record_schema
class LeftOutPair(TypedDict):
    """A pair of systems with some labelled comparisons but no calibrated win rate."""

    system_a: str
    system_b: str
    labelled: int
    comparisons: int
    reason: str
    # every comparison labelled: the humans' win rate of system_a (ties half), prompt-clustered
    human_win_rate: NotRequired[ProportionInterval]


@record_schema
class CalibratedMean(PPIMean):
    """The calibrated mean human score of one system on one dimension."""

    system: str
    dimension: str


Side = Literal["won", "lost", "apart"]


@record_schema
class OneSidedGroup(TypedDict):
    """Systems whose labelled comparisons with every other system went one way (or none)."""

    systems: list[str]
    side: Side  # won: never lost one to the rest; lost: never won one; apart: never compared


@record_schema
class PairShare(TypedDict):
    """One pair's labelled comparisons against its share of all labels."""

    system_a: str
    system_b: str
    labelled: int
    comparisons: int
    expected: float  # labelled comparisons at the overall labelled share


@record_schema
class LabelSlice(TypedDict):
    """``calibrated_leaderboard["label_slice"]``: the test of the module doc."""

    pairs: int  # pairs of systems compared
    chi_square: float
    p_value: float
    draws: int
    random: bool  # False: flagged, p_value < FLAG_P
    # pairs whose labelled count lies NAMED_RESIDUAL standard errors or more from its share,
    # the fewest labelled against their share first; filled only when flagged
    uneven: list[PairShare]


@record_schema
class CalibratedRow(TypedDict):
    """One system's calibrated rating and field win rate."""

    rank: int  # 1 = highest calibrated rating
    system: str
    rating: float
    ci95: list[float]
    panel_rating: float  # the panel alone on all comparisons, uncorrected
    panel_ci95: list[float]
    labelled: int  # labelled comparisons the system took part in
    comparisons: int  # all its comparisons, labelled or not
    field: PPIMean | None  # win rate against the field; None with < 2 labelled or no unlabelled


@record_schema
class BestSystem(TypedDict):
    """The top system by an estimate, and whether its interval sets it apart."""

    system: str
    resolved: bool
    runner_up: str | None  # the highest-ranked other system whose interval overlaps; None if resolved


@record_schema
class CalibratedLeaderboard(TypedDict):
    """``metrics.json["systems"]["calibrated_leaderboard"]``."""

    anchor: str
    scale: str
    predictions: Literal["hard", "soft"]
    labelled: int  # n labelled comparisons
    comparisons: int  # n + N, all comparisons
    lam: float  # the ratings' power-tuning parameter
    alpha: float
    quantile: Quantile  # of the ratings' intervals
    # the ratings' t quantile's degrees of freedom, labelled - ratings estimated, with the
    # small-sample corrected sandwich (release 7 on; before: labelled - 1, uncorrected)
    degrees_of_freedom: NotRequired[int]
    # systems that won, or lost, every labelled comparison they took part in (none named before
    # release 5)
    one_sided: list[str]
    # groups of 2 or more systems the labels do not place against the rest (none named before
    # release 6)
    one_sided_groups: list[OneSidedGroup]
    labels_only: bool  # every comparison labelled: the labels alone (release 5 on; False before)
    # comparisons the panel did not decide, in the board with a tie as its prediction, and how
    # many of them are labelled (release 7 on; before, they were left out, labels and all)
    undecided: NotRequired[int]
    undecided_labelled: NotRequired[int]
    # the test of the labelled share across pairs (None: runs before release 7 did not test it)
    label_slice: LabelSlice | None
    rows: list[CalibratedRow]
    best: BestSystem  # by rating
    best_field: BestSystem | None  # by field win rate; None when fewer than two systems have one
    rule: str
