"""run.json: what ran, how, and what it cost (``RunInfo``), with each model's usage ``Counts``,
an adaptive run's choices and an imported run's source."""

from typing import Any, Literal, NotRequired

from typing_extensions import TypedDict

from chateval.schema.base import record_schema


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

    path: str  # the verdicts file (or a folder or glob of them, each in run.json's inputs)
    sha256: str  # "sha256:<hex>" of it, when imported (several files: of their hashes, a line each)
    # the verdicts with the answers swapped, where a second file holds them (ChatEval's
    # calc_score_comparison_reverse); its hash is in run.json's inputs
    swapped_path: NotRequired[str]
    config: str  # the import config
    at: str  # when, ISO 8601 UTC
    records: int  # records the file holds
    kept: int  # of those, the comparisons imported (the kept turn and judge)
    skipped: dict[str, int]  # verdicts the judge did not give, by the file's value (MT-Bench's error)
    labels: ImportedLabels | None


@record_schema
class StoreInfo(TypedDict):
    """run.json's ``judgment_store`` (format 4 on): the store a run used (chateval.store), its
    panel's fingerprint there, how many of the run's debates it reused and judged now, and the
    seconds the run spent on the store (model digests, keys, look-ups and writes)."""

    path: str
    panel: str
    reused: int
    judged: int
    seconds: float


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
    # The judgment store the run used (format 4 on; absent: it used none).
    judgment_store: NotRequired[StoreInfo]
    model_load_seconds: float
    debate_seconds: float
    wall_seconds: float
    started_at: str
    resumed: bool
