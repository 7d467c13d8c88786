"""The records of a run folder: verdicts.jsonl (a ``VerdictRecord`` per item, with its
``OrderRecord``s and ``RefereeRow``s), transcripts.jsonl (``TranscriptRecord``), items.jsonl
(``ItemRecord``: the items as debated), roster.json (``Roster``: who judged, with which role
text and which model) and run.json (``RunInfo``, with each model's usage ``Counts``).

chateval.record reads every one of them through pydantic against these types (``record_schema``:
a key a type does not know is an error), after migrating an earlier release's format."""

from typing import Any, Literal, NotRequired, Required

from typing_extensions import TypedDict

from chateval.core.items import Label
from chateval.core.strict_model import record_schema

UtteranceKind = Literal["discussion", "assessment", "verdict", "summary", "probe"]
TurnKind = Literal["discussion", "summary", "verdict", "check", "probe"]  # chateval.core.transcript


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


@record_schema
class TranscriptMessage(TypedDict, total=False):
    """One utterance of transcripts.jsonl (runs of earlier releases lack some keys)."""

    round: int
    speaker: str
    kind: str  # discussion, assessment, verdict, summary, probe
    for_referee: str  # a summary: the referee it was written for (absent before per-referee summaries)
    turn: str  # the turn it answers: discussion, summary, verdict, check, probe
    probe: bool  # a hidden turn: an opinion probe or an early-stop check
    scoring: bool  # the scores that continue the assessment before
    text: str
    finish_reason: str | None
    tokens: int | None  # generated tokens


@record_schema
class TranscriptRecord(TypedDict):
    """One line of transcripts.jsonl: a debate (an item in one answer order) as it was said."""

    key: str
    item_id: str
    swapped: bool
    messages: list[TranscriptMessage]


@record_schema
class Counts(TypedDict):
    """What one model's backend did (``chateval.core.usage.ModelUsage``)."""

    batches: int
    engine_steps: int
    requests: int
    prompt_tokens: int
    generated_tokens: int
    cached_prompt_tokens: int


@record_schema
class AdaptiveInfo(TypedDict):
    """run.json's ``adaptive``: what a run with the adaptive design chose, and why it stopped."""

    budget: int  # comparisons it could spend (the config's, cut to the candidates)
    wave: int  # comparisons per wave, at most
    top_k: int | None
    candidates: int  # the all_pairs comparisons it chose from
    chosen: int  # comparisons debated (the items of verdicts.jsonl)
    waves: int
    stop: str | None  # "budget spent", "resolved", "top-k resolved", "every candidate compared"


@record_schema
class ImportedLabels(TypedDict):
    """run.json's ``imported.labels``: where an imported run's right answers came from."""

    kind: Literal["human", "objective"]
    path: str | None  # the labels file; None: a field of the verdicts file
    labelled: int  # comparisons that got a label
    votes: int  # the labels file's votes of the kept turn (a field: one per labelled record)
    unused: int  # comparisons the labels file votes on that no imported verdict judged


@record_schema
class ImportedInfo(TypedDict):
    """run.json's ``imported``: a run folder ``chateval import`` wrote from another tool's
    verdicts; no model ran."""

    path: str  # the verdicts file
    sha256: str  # "sha256:<hex>" of it, when imported
    config: str  # the import config
    at: str  # when, ISO 8601 UTC
    records: int  # records the file holds
    kept: int  # of those, the comparisons imported (the kept turn and judge)
    skipped: dict[str, int]  # verdicts the judge did not give, by the file's value (MT-Bench's error)
    labels: ImportedLabels | None


@record_schema
class RunInfo(TypedDict):
    """run.json: what ran, how, and what it cost."""

    # The run folder's format (chateval.record.migrations: what each version changed); files of
    # version 1 have none, and the reader adds it.
    format_version: int
    chateval_version: str
    name: str
    task: str
    backend: str  # the backends that served the models, joined by "+" (vllm, openai+vllm ...)
    backends: NotRequired[dict[str, str]]  # per model: its backend, and replicas when several
    strategy: str
    agents: int
    # Each referee's model by its name, and the summarizer's (what the statistics need); runs
    # of releases before 0.9 do not have them (the reader rebuilds them from the config).
    referees: NotRequired[dict[str, str]]
    summarizer_model: NotRequired[str]
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
    adaptive: NotRequired[AdaptiveInfo]  # runs with the adaptive design only
    # Each input file the run read (data, questions, labels) -> "sha256:<hex>", when it started;
    # runs of releases before format 3 lack it.
    inputs: NotRequired[dict[str, str]]
    # Folders `chateval import` wrote (no debate, no model): where the verdicts came from.
    imported: NotRequired[ImportedInfo]
    model_load_seconds: float
    debate_seconds: float
    wall_seconds: float
    started_at: str
    resumed: bool


@record_schema
class EarlierTurnRecord(TypedDict):
    """A conversation's turn before the judged one (chateval.core.items.EarlierTurn)."""

    question: str
    answer_a: str
    answer_b: str


@record_schema
class ItemRecord(TypedDict, total=False):
    """One line of items.jsonl: an item exactly as its debates showed it (cut to fit the models'
    contexts where the run had to; its verdict record's ``truncated`` says where), with its human
    labels or scores and the systems it names (chateval.core.items)."""

    kind: Required[Literal["pairwise", "direct"]]
    id: Required[str]
    # pairwise
    question: str
    answer_a: str
    answer_b: str
    label: Label | None
    system_a: str | None
    system_b: str | None
    prompt: str | None
    # direct
    context: str
    response: str
    knowledge: str
    scores: dict[str, float]
    group: str | None
    system: str | None
    category: str  # both kinds; absent when the data has no categories
    earlier: list[EarlierTurnRecord]  # pairwise, the turns before the judged one (data.turn)
    earlier_left_out: int  # of those, the first ones cut to fit a model's context


@record_schema
class RosterReferee(TypedDict):
    """A referee as the panel had it: its speaker name, its role's name and text, its model."""

    name: str
    role: str
    role_text: str
    model: str


@record_schema
class RosterModel(TypedDict):
    """A model as the run used it: what served it, and which weights (chateval.record.roster)."""

    backend: str  # vllm, transformers, openai, ...; the class's name for a backend handed in
    replicas: int
    path: str | None  # the resolved model folder (None: served without a local copy, or handed in)
    # sha256 over the folder's file names and sizes, small files whole and each large file's
    # first and last MiB (None: no folder)
    fingerprint: str | None
    server: str | None  # a served model's base URL
    dtype: str | None
    max_model_len: int | None
    # The default system prompt the model's chat template would add to a chat without one,
    # replaced by an empty system message (None: it adds none; absent: a run made before chateval
    # read it)
    replaced_system_prompt: NotRequired[str | None]


@record_schema
class Roster(TypedDict):
    """roster.json: the panel that judged (the speakers' names, roles and models) and the
    models' weights, written with the run's results. ``rebuilt``: read from a folder of a release
    before roster.json, rebuilt from its config.yaml with this release's role texts."""

    referees: list[RosterReferee]
    summarizer_model: str
    prompt_style: str
    models: dict[str, RosterModel]
    rebuilt: NotRequired[bool]


@record_schema
class JournalUtterance(TypedDict):
    """A line of journal.jsonl: one utterance of a debate step (chateval.run.journal). Journals
    of earlier releases lack ``turn`` (they flag hidden turns with ``probe``), ``scoring``,
    ``tokens`` and ``distributions``."""

    step: int
    debate: str
    round: int
    agent: int | None
    turn: NotRequired[TurnKind]
    probe: NotRequired[bool]
    scoring: NotRequired[bool]
    speaker: str
    kind: UtteranceKind
    text: str
    finish_reason: str
    tokens: NotRequired[int | None]
    distributions: NotRequired[list[Distribution]]


@record_schema
class JournalStep(TypedDict):
    """A line of journal.jsonl marking a step done: of every debate, of one (``debate``,
    streaming) or of several (``debates``, an adaptive batch), with its usage per model (an
    earlier release's counter names included)."""

    step_done: int
    usage: dict[str, dict[str, int]]
    debate: NotRequired[str]
    debates: NotRequired[list[str]]


@record_schema
class JournalWave(TypedDict):
    """A line of journal.jsonl: the comparisons an adaptive run chose as wave ``wave``."""

    wave: int
    keys: list[str]


@record_schema
class JournalStop(TypedDict):
    """A line of journal.jsonl: why an adaptive run chose no more waves."""

    stop: str


@record_schema
class JournalHeader(TypedDict):
    """journal.jsonl's first line (format 2 on): the format it is written in and (format 3 on)
    each input file's hash when the run started."""

    format_version: int
    inputs: NotRequired[dict[str, str]]
