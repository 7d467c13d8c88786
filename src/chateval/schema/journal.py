"""journal.jsonl: its header, each debate step's utterances and the marker that the step is
done, and an adaptive run's waves and stop (chateval.record.journal reads and writes them)."""

from typing import NotRequired

from typing_extensions import TypedDict

from chateval.schema.base import record_schema
from chateval.schema.transcripts import TurnKind, UtteranceKind
from chateval.schema.verdicts import Distribution


@record_schema
class JournalHeader(TypedDict):
    """journal.jsonl's first line (format 2 on): the format it is written in and (format 3 on)
    each input file's hash when the run started."""

    format_version: int
    inputs: NotRequired[dict[str, str]]


@record_schema
class JournalUtterance(TypedDict):
    """A line of journal.jsonl: one utterance of a debate step (chateval.record.journal). Journals
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
