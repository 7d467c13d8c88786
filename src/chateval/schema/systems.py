"""The parts of metrics.json's ``systems`` (chateval.schema.run_metrics puts them together):
pairwise, win rates with the longer answer's share, Davidson-Bradley-Terry leaderboards and
each system against a baseline; direct, each system's mean score and the paired differences.
The calibrated estimates are in chateval.schema.calibrated."""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from chateval.schema.agreement import Interval
from chateval.schema.base import record_schema

# Below MIN_PROMPTS_CLUSTERED prompts (chateval.evaluation.systems.proportion_interval), runs
# scored before release 7 show the comparisons taken as independent: "clopper-pearson-independent"
# (releases 5 and 6) or "wilson-independent" (earlier). Runs of the first systems releases wrote
# a percentile bootstrap over prompts and no method: read back, their intervals say
# PERCENTILE_BOOTSTRAP (chateval.record.migrations).
PERCENTILE_BOOTSTRAP = "percentile-bootstrap"
Method = Literal[
    "percentile-bootstrap",
    "wilson-cluster",
    "clopper-pearson-prompts",
    "clopper-pearson-independent",
    "wilson-independent",
    "t-cluster",
]


class ProportionInterval(Interval):
    """A proportion with its 95% interval, how it was computed (``method``) and the effective
    number of comparisons behind it (``effective_n``, N over the design effect). Runs written
    before these intervals have a percentile bootstrap interval and neither key."""

    method: NotRequired[Method]
    effective_n: NotRequired[float]


@record_schema
class LengthBias(TypedDict):
    """How often the longer answer won a decisive verdict.

    ``share`` is ``longer_won / n`` over decisive verdicts (not ties) between answers of
    different lengths, None when there are none; ``equal_lengths`` decisive verdicts were left
    out because both answers had the same length, ``ties`` because they decided nothing.
    """

    share: ProportionInterval | None
    n: int
    longer_won: int
    equal_lengths: int
    ties: int


@record_schema
class PairWinRate(TypedDict):
    """Wins, ties and losses of ``system_a`` against ``system_b`` and its win rate (ties half)."""

    system_a: str
    system_b: str
    n: int  # comparisons of the pair
    prompts: int  # distinct prompts they come from
    wins: int
    ties: int
    losses: int
    win_rate: ProportionInterval  # hard decisions, ties count half
    soft_win_rate: ProportionInterval | None  # mean soft probability; None when no comparison has one
    n_soft: int  # comparisons with a soft probability


@record_schema
class SystemWinRate(TypedDict):
    """A system's record against all its opponents (ties half)."""

    system: str
    n: int
    wins: int
    ties: int
    losses: int
    win_rate: ProportionInterval
    soft_win_rate: ProportionInterval | None
    n_soft: int


@record_schema
class WinRates(TypedDict):
    systems: list[str]
    prompts: int
    comparisons: int
    pairs: list[PairWinRate]
    overall: list[SystemWinRate]
    length_bias: LengthBias


@record_schema
class LeaderboardRow(TypedDict):
    rank: int  # 1 = highest rating; equal ratings share a rank (1, 2, 2, 4)
    system: str
    rating: float
    ci95: list[float]
    n: int  # comparisons the system took part in
    wins: int
    ties: int
    losses: int
    mean_length: float  # words, over the system's distinct (prompt, answer)s


@record_schema
class Leaderboard(TypedDict):
    anchor: str
    scale: str
    length_control: bool
    length_covariate: str | None  # what x is, with length control
    length_coefficient: Interval | None  # gamma, with length control
    tie_parameter: Interval | None  # nu; None when the data have no ties (plain Bradley-Terry)
    rows: list[LeaderboardRow]
    prompts: int
    comparisons: int
    ridge: float
    # davidson_intervals' method; runs before release 4 read back as PERCENTILE_BOOTSTRAP, with
    # ``resamples`` (how many resamples of the prompts).
    interval_method: str
    resamples: NotRequired[int]
    # [higher, lower] for every pair whose rating difference excludes 0 with all pairs' intervals
    # holding at once (Bonferroni over the pairs, ``resolved_pairs``); None: runs before release
    # 5 did not record them.
    resolved: list[list[str]] | None
    # The joint error of ``resolved``: 0.05 (every run's before it was recorded), or an adaptive
    # run's share of its design's 0.05.
    resolved_alpha: float


@record_schema
class BaselineRate(TypedDict):
    """One system against the baseline (module doc)."""

    system: str
    comparisons: int
    prompts: int
    wins: int
    ties: int
    losses: int
    win_rate: ProportionInterval
    lc_win_rate: Interval | None  # None: no comparison to fit, or not estimable (lc_reason)
    lc_reason: NotRequired[str]  # why the length-controlled rate is not estimable
    length_coefficient: Interval | None  # phi; None when the lengths never differ
    interval_method: str


@record_schema
class AgainstBaseline(TypedDict):
    """metrics.json ``systems.against_baseline``."""

    baseline: str
    length_scale: float  # s, the words by which d is scaled
    rows: list[BaselineRate]
    warning: NotRequired[str]  # earlier runs: LC intervals under 5 prompts taken as independent


@record_schema
class SystemMean(TypedDict):
    """One system's mean score on one dimension over the prompts it was scored on."""

    system: str
    dimension: str
    n: int  # prompts
    mean: Interval


@record_schema
class PairedDifference(TypedDict):
    """Mean of ``system_a``'s score minus ``system_b``'s over the prompts both were scored on
    (None when they share none)."""

    system_a: str
    system_b: str
    dimension: str
    n: int  # shared prompts
    difference: Interval | None


@record_schema
class DirectSystems(TypedDict):
    systems: list[str]
    dimensions: list[str]
    prompts: int
    resamples: NotRequired[int]  # runs scored before release 6: percentile bootstrap intervals
    method: str  # ``mean_interval.METHOD``; runs before release 6 read back as PERCENTILE_BOOTSTRAP
    means: list[SystemMean]
    differences: list[PairedDifference]
