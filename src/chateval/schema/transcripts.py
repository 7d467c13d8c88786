"""transcripts.jsonl: a ``TranscriptRecord`` per debate (an item in one answer order) with its
utterances (``TranscriptMessage``), and the kinds of utterance and turn they name."""

from typing import Literal, NotRequired

from typing_extensions import TypedDict

from chateval.schema.base import record_schema

UtteranceKind = Literal["discussion", "assessment", "verdict", "summary", "probe"]
TurnKind = Literal["discussion", "summary", "verdict", "check", "probe"]  # chateval.core.transcript


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
class ReusedFrom(TypedDict):
    """Where a debate taken from the judgment store was judged: its store key, and the folder
    and start time of the run that judged it."""

    key: str
    judged_in: str
    judged_at: str


@record_schema
class TranscriptRecord(TypedDict):
    """One line of transcripts.jsonl: a debate (an item in one answer order) as it was said;
    ``reused`` (format 4 on): taken from the judgment store, not judged by this run."""

    key: str
    item_id: str
    swapped: bool
    messages: list[TranscriptMessage]
    reused: NotRequired[ReusedFrom]
