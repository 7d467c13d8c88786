"""Immutable debate state: the turns of a plan and the utterances they produced."""

from dataclasses import dataclass
from typing import Literal

from chateval.soft import ScoreDistribution

SUMMARIZER = "summarizer"

UtteranceKind = Literal["discussion", "assessment", "verdict", "summary", "probe"]


@dataclass(frozen=True)
class Turn:
    """One slot of a debate plan: who speaks in which round.

    ``agent`` is the index of a panel member, or None for the summarizer. A ``probe`` turn
    asks a referee for its verdict as of the start of ``round`` (round 0: before any
    discussion); nobody sees its answer.

    A verdict turn (a referee's last round, or a probe) with reasoning on is two turns in
    consecutive steps: first the free-text assessment, then the constrained scores
    (``scoring``), which continue the referee's own assessment.
    """

    round: int
    agent: int | None
    probe: bool = False
    scoring: bool = False

    @property
    def is_summary(self) -> bool:
        return self.agent is None

    def scored(self) -> "Turn":
        """The scoring half of this verdict turn."""
        return Turn(self.round, self.agent, self.probe, scoring=True)

    def reasoned(self) -> "Turn":
        """The assessment half of this verdict turn."""
        return Turn(self.round, self.agent, self.probe, scoring=False)


@dataclass(frozen=True)
class Utterance:
    """What one speaker said in one turn.

    ``distributions``: for constrained scores read with token probabilities (soft verdicts),
    one distribution per score line, in order.
    """

    turn: Turn
    speaker: str
    kind: UtteranceKind
    text: str
    finish_reason: str = "stop"
    distributions: tuple[ScoreDistribution, ...] | None = None


@dataclass(frozen=True)
class Transcript:
    """The ordered utterances of one debate. Appending returns a new transcript."""

    utterances: tuple[Utterance, ...] = ()

    def add(self, utterance: Utterance) -> "Transcript":
        return Transcript(self.utterances + (utterance,))

    def __len__(self) -> int:
        return len(self.utterances)
