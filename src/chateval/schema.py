"""The shapes of what a run writes: verdicts.jsonl records, metrics with intervals, run.json.

These are the JSON objects themselves (TypedDicts), so a record read back from disk (rescore,
report) is the same type as one built in memory. Keys that only some runs have (pairwise or
direct, soft verdicts, opinion probes, reasoning) are optional.
"""

from typing import Any, NotRequired, Required, TypedDict

from chateval.data.items import Label


class Interval(TypedDict):
    """A statistic and its 95% bootstrap interval."""

    value: float
    ci95: list[float]


class LabelCounts(TypedDict):
    human: dict[str, int]
    predicted: dict[str, int]


class PairwiseMetrics(TypedDict):
    """Agreement of predicted labels with human labels."""

    n: int
    label_counts: LabelCounts
    accuracy: Interval
    kappa: Interval


class Correlations(TypedDict):
    """Rank correlations of one dimension's predicted scores with the human ones."""

    n: int
    spearman: Interval
    kendall: Interval


class AverageCorrelations(TypedDict):
    dimensions: list[str]
    spearman: Interval
    kendall: Interval


class DirectMetrics(TypedDict, total=False):
    """Per-dimension correlations, what was resampled, and their average."""

    dimensions: Required[dict[str, Correlations]]
    resampled: Required[str]
    average: AverageCorrelations


class Distribution(TypedDict):
    """A referee's probabilities over one score's values (``chateval.soft``)."""

    probabilities: dict[str, float]
    expected: float | None
    entropy: float | None
    unmapped: float
    ambiguous: float


class RefereeRow(TypedDict, total=False):
    """One referee's verdict on one item (pairwise: in one answer order), or its failure."""

    agent: Required[str]
    # pairwise
    score_a: int
    score_b: int
    winner: Label
    winner_shown: str
    soft_score_a: float
    soft_score_b: float
    # direct
    scores: dict[str, int]
    soft_scores: dict[str, float]
    # both
    evidence: str
    distributions: list[Distribution] | dict[str, Distribution]
    error: str | None
    raw: str
    opinions: list[Any]
    assessment: str
    parroting: dict[str, Any]


class OrderRecord(TypedDict):
    """A pairwise item's verdicts in one answer order."""

    swapped: bool
    label: Label | None
    referees: list[RefereeRow]


class VerdictRecord(TypedDict, total=False):
    """One line of verdicts.jsonl: an item's verdicts and the panel's decision."""

    item_id: Required[str]
    parse_failures: Required[int]
    truncated: dict[str, dict[str, tuple[int, int]]] | None
    # pairwise
    orders: list[OrderRecord]
    referee_labels: dict[str, Label]
    excluded_referees: list[str]
    score_a: float
    score_b: float
    label: Label | None
    soft_score_a: float
    soft_score_b: float
    soft_label: Label
    soft_referee_labels: dict[str, Label]
    human_label: Label | None
    # direct
    referees: list[RefereeRow]
    scores: dict[str, float] | None
    soft_scores: dict[str, float]
    human_scores: dict[str, float] | None
    group: str


class Counts(TypedDict):
    """What one model's backend did (``chateval.backends.usage.ModelUsage``)."""

    batches: int
    engine_steps: int
    requests: int
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int


class RunInfo(TypedDict):
    """run.json: what ran, how, and what it cost."""

    chateval_version: str
    name: str
    task: str
    backend: str  # the backends that served the models, joined by "+" (vllm, openai+vllm ...)
    backends: NotRequired[dict[str, str]]  # per model: its backend, and replicas when several
    strategy: str
    agents: int
    rounds: int
    items: int
    debates: int
    position_calibration: bool
    scheduling: str  # "streaming" or "barrier"
    early_stopped_debates: int
    steps: int
    batches: int  # backend calls of step-barrier runs
    engine_steps: int  # engine steps polled by streaming runs
    requests: int
    prompt_tokens: int
    cached_prompt_tokens: int
    generated_tokens: int
    verdict_parse_failures: int
    truncated_items: int
    per_model: dict[str, Counts]
    placement: dict[str, Any]
    # Models on several replicas (scale): per replica, its node, requests, tokens, busy seconds.
    replicas: NotRequired[dict[str, list[dict[str, Any]]]]
    model_load_seconds: float
    debate_seconds: float
    wall_seconds: float
    started_at: str
    resumed: bool
