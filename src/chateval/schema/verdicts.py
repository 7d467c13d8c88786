"""verdicts.jsonl: a ``VerdictRecord`` per item, with its ``OrderRecord``s (pairwise: one per
answer order) and ``RefereeRow``s (one per referee), each referee's behaviour in the debate
(echoes, copies, recitations) and its turns cut off at the token cap, and a score's
probabilities (``Distribution``)."""

from typing import Any, NotRequired, Required

from typing_extensions import TypedDict

from chateval.schema.base import Label, record_schema


@record_schema
class RefereeBehaviourRecord(TypedDict):
    """A verdict row's ``parroting`` (chateval.evaluation.diagnostics.parroting.RefereeBehaviour);
    rows of earlier releases lack the copied words and the blind turns, then the recitations
    and whose verdicts it saw."""

    utterances: int
    echoing: int
    saw_verdict: bool
    copied_from: str | None
    saw_words: NotRequired[int]
    copied_words: NotRequired[int]
    blind_words: NotRequired[int]
    blind_words_shared: NotRequired[int]
    blind_verdicts: NotRequired[int]
    blind_verdicts_equal: NotRequired[int]
    reciting: NotRequired[int]  # utterances repeating 8 words in a row of the item's text
    saw_verdicts_of: NotRequired[list[str]]  # the referees whose (parsed) verdict it saw


@record_schema
class RefereeCutOff(TypedDict):
    """A verdict row's ``cut_off``: its referee's turns in the debate that hit the token cap,
    and its assessments that came out empty."""

    discussions: int
    discussions_cut: int
    assessments: int
    assessments_cut: int
    verdict_assessment_cut: bool | None  # None: no verdict, or one without assessment
    # empty assessments (the referee began with its scores, or wrote nothing); rows of earlier
    # releases lack them
    assessments_empty: NotRequired[int]
    verdict_assessment_empty: NotRequired[bool | None]


@record_schema
class SummariesCutOff(TypedDict):
    """A record's ``cut_off``: the summarizer's summaries that hit the token cap."""

    summaries: int
    summaries_cut: int


@record_schema
class Distribution(TypedDict):
    """A referee's probabilities over one score's values (``chateval.judging.soft``)."""

    probabilities: dict[str, float]
    expected: float | None
    entropy: float | None
    unmapped: float
    ambiguous: float


@record_schema
class RefereeRow(TypedDict, total=False):
    """One referee's verdict on one item (pairwise: in one answer order), or its failure."""

    agent: Required[str]
    # pairwise
    score_a: int | float  # a half point (7.5) only with verdict.half_points
    score_b: int | float
    winner: Label
    winner_shown: str
    soft_score_a: float
    soft_score_b: float
    # an imported verdict (chateval.judging.imported): A's share of the win by its position on
    # a numeric scale (AlpacaEval's preference), and how many times its source counts it
    # (Arena-Hard's strong verdicts), where the import gives them
    share_a: float
    weight: float
    # direct
    scores: dict[str, int | float]
    soft_scores: dict[str, float]
    # both
    evidence: str
    distributions: list[Distribution] | dict[str, Distribution]
    error: str | None
    raw: str
    opinions: list[Any]
    opinion_scores: list[list[int | float] | None]  # pairwise: each probe's [score A, score B]
    assessment: str
    parroting: RefereeBehaviourRecord
    # its turns cut off at the token cap (chateval.evaluation.diagnostics.cut_off.referee_cut_off)
    cut_off: RefereeCutOff


@record_schema
class OrderRecord(TypedDict):
    """A pairwise item's verdicts in one answer order."""

    swapped: bool
    label: Label | None
    referees: list[RefereeRow]


@record_schema
class VerdictRecord(TypedDict, total=False):
    """One line of verdicts.jsonl: an item's verdicts and the panel's decision."""

    item_id: Required[str]
    parse_failures: Required[int]
    truncated: dict[str, dict[str, tuple[int, int]]] | None
    cut_off: SummariesCutOff  # summaries cut off at the token cap, when its debates had summaries
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
    # pairwise items that name their systems (responses data, or system_a/system_b fields)
    prompt: str  # the prompt the item belongs to (direct: its group), when the data says
    category: str  # the item's category (fields.category), when the data has one
    system_a: str | None
    system_b: str | None
    words_a: int  # each answer's length in words, as the referees were shown it
    words_b: int
    # direct
    referees: list[RefereeRow]
    scores: dict[str, float] | None
    soft_scores: dict[str, float]
    human_scores: dict[str, float] | None
    group: str
    response_words: int  # the response's length in words (the length baseline)
    system: str  # the system that wrote the response, when the data says
