"""Immutable debate state: the turns of a plan and the utterances they produced."""

from dataclasses import dataclass
from typing import Literal

SUMMARIZER = "summarizer"

UtteranceKind = Literal["discussion", "verdict", "summary", "probe"]


@dataclass(frozen=True)
class Turn:
    """One slot of a debate plan: who speaks in which round.

    ``agent`` is the index of a panel member, or None for the summarizer. A ``probe`` turn
    asks a referee for its verdict as of the start of ``round`` (round 0: before any
    discussion); nobody sees its answer.
    """

    round: int
    agent: int | None
    probe: bool = False

    @property
    def is_summary(self) -> bool:
        return self.agent is None


@dataclass(frozen=True)
class Utterance:
    """What one speaker said in one turn."""

    turn: Turn
    speaker: str
    kind: UtteranceKind
    text: str
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Transcript:
    """The ordered utterances of one debate. Appending returns a new transcript."""

    utterances: tuple[Utterance, ...] = ()

    def add(self, utterance: Utterance) -> "Transcript":
        return Transcript(self.utterances + (utterance,))

    def __len__(self) -> int:
        return len(self.utterances)
