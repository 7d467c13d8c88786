"""Debate state: the turns of a plan, the utterances they produced, and a debate's transcript of them."""

from dataclasses import dataclass, field

from chateval.core.distributions import ScoreDistribution
from chateval.core.items import Item
from chateval.schema.transcripts import TurnKind as TurnKind
from chateval.schema.transcripts import UtteranceKind as UtteranceKind

SUMMARIZER = "summarizer"

# What a turn is for (TurnKind; it and UtteranceKind are defined with the record types that
# store them, chateval.schema.transcripts):
#
# - ``discussion``: a referee speaks in a round before its last;
# - ``summary``: the summarizer brings one referee's summary up to date after a round
#   (``agent`` is that referee; None in runs of releases with one summary for the panel);
# - ``verdict``: a referee's last round, which ends in its scores;
# - ``check``: an early-stop check, a hidden verdict after a non-final round (unanimous checks
#   end the debate and become its verdicts);
# - ``probe``: an opinion probe, a hidden verdict as of the start of a round, asked at the end.

HIDDEN_KINDS = ("check", "probe")


@dataclass(frozen=True)
class Turn:
    """One slot of a debate plan: who speaks in which round, and for what (``kind``).

    ``agent`` is the index of a panel member (for a summary: the referee it summarizes for;
    None in runs of earlier releases, whose one summary served the panel). A hidden turn (a
    check or a probe) asks a referee for its verdict as of the start of ``round`` (round 0:
    before any discussion); nobody sees its answer. A check and a probe of the same round and
    referee ask the same question.

    A verdict-giving turn (verdict, check, probe) with reasoning on is two turns in
    consecutive steps: first the free-text assessment, then the constrained scores
    (``scoring``), which continue the referee's own assessment.
    """

    round: int
    agent: int | None
    kind: TurnKind = "discussion"
    scoring: bool = False

    def __post_init__(self) -> None:
        if self.agent is None and self.kind != "summary":
            raise ValueError(f"a {self.kind} turn with no agent: only an old run's summaries have none")

    @property
    def is_summary(self) -> bool:
        return self.kind == "summary"

    @property
    def hidden(self) -> bool:
        """A check or a probe: a verdict nobody else sees."""
        return self.kind in HIDDEN_KINDS

    @property
    def gives_verdict(self) -> bool:
        """The turn carries the verdict instruction (a referee's last round, a check, a probe)."""
        return self.kind in ("verdict", *HIDDEN_KINDS)

    def question(self) -> tuple[int, int | None, bool]:
        """What the turn asks, whatever its half: a check and a probe of one round are one question."""
        return (self.round, self.agent, self.hidden)

    def scored(self) -> "Turn":
        """The scoring half of this verdict turn."""
        return Turn(self.round, self.agent, self.kind, scoring=True)

    def reasoned(self) -> "Turn":
        """The assessment half of this verdict turn."""
        return Turn(self.round, self.agent, self.kind, scoring=False)


@dataclass(frozen=True)
class Utterance:
    """What one speaker said in one turn.

    ``distributions``: for constrained scores read with token probabilities (soft verdicts),
    one distribution per score line, in order. ``tokens``: how many tokens the model generated
    for it (None in journals of releases that did not record it).
    """

    turn: Turn
    speaker: str
    kind: UtteranceKind
    text: str
    finish_reason: str = "stop"
    distributions: tuple[ScoreDistribution, ...] | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class Transcript:
    """The ordered utterances of one debate. Appending returns a new transcript."""

    utterances: tuple[Utterance, ...] = ()

    def add(self, utterance: Utterance) -> "Transcript":
        return Transcript(self.utterances + (utterance,))

    def __len__(self) -> int:
        return len(self.utterances)


@dataclass
class Debate:
    """The mutable state of one debate: an item (in one answer order) and its transcript."""

    key: str
    item: Item
    swapped: bool = False
    transcript: Transcript = field(default_factory=Transcript)
