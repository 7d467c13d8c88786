"""The three communication strategies of ChatEval.

A strategy decides two things and nothing else: the plan (which turns form each step; turns in
one step run at the same time) and visibility (which earlier utterances a turn's speaker sees).
It never calls a backend. The strategies' registry is chateval.core.choices.STRATEGIES (its
built-ins name the classes below; a plugin's comes from its entry point).
"""

from abc import ABC, abstractmethod

from chateval.core.choices import STRATEGIES
from chateval.core.transcript import Transcript, Turn, Utterance
from chateval.errors import ConfigError

Step = tuple[Turn, ...]


class Strategy(ABC):
    """A communication strategy: a plan of steps and a visibility rule."""

    name: str = ""

    @abstractmethod
    def plan(self, n_agents: int, rounds: int) -> list[Step]:
        """The steps of a debate of ``n_agents`` referees over ``rounds`` rounds, in order."""

    @abstractmethod
    def visible(self, transcript: Transcript, turn: Turn) -> list[Utterance]:
        """The utterances the speaker of ``turn`` sees, oldest first."""


class OneByOne(Strategy):
    """Agents speak in a fixed order; each sees everything said before it, this round included."""

    name = "one_by_one"

    def plan(self, n_agents: int, rounds: int) -> list[Step]:
        return [(Turn(r, a),) for r in range(rounds) for a in range(n_agents)]

    def visible(self, transcript: Transcript, turn: Turn) -> list[Utterance]:
        assert turn.agent is not None
        return [
            u
            for u in transcript.utterances
            if u.turn.round < turn.round
            or (u.turn.round == turn.round and u.turn.agent is not None and u.turn.agent < turn.agent)
        ]


class Simultaneous(Strategy):
    """All agents of a round speak at once; each sees only earlier rounds."""

    name = "simultaneous"

    def plan(self, n_agents: int, rounds: int) -> list[Step]:
        return [tuple(Turn(r, a) for a in range(n_agents)) for r in range(rounds)]

    def visible(self, transcript: Transcript, turn: Turn) -> list[Utterance]:
        return [u for u in transcript.utterances if u.turn.round < turn.round]


class SimultaneousSummarizer(Strategy):
    """Simultaneous talk, and each referee has its own summarizer (as in the paper's code).

    After every round but the last, one summary per referee (``Turn(round, agent, "summary")``,
    a step of their own): given that referee's current summary and every line it has seen so
    far (its earlier summaries included), the summarizer returns a new summary, which joins
    what that referee sees as a line from "Summarizer", after the round it followed. The
    summary does not replace the discussion: a referee still sees every earlier round, and only
    its own summaries. No summary follows the last round: nobody would read it.
    """

    name = "simultaneous_summarizer"

    def plan(self, n_agents: int, rounds: int) -> list[Step]:
        steps: list[Step] = []
        for r in range(rounds):
            steps.append(tuple(Turn(r, a) for a in range(n_agents)))
            if r < rounds - 1:
                steps.append(tuple(Turn(r, a, "summary") for a in range(n_agents)))
        return steps

    def visible(self, transcript: Transcript, turn: Turn) -> list[Utterance]:
        # A summary of round r sees what its referee will see at round r + 1, but its own summary.
        before = turn.round + 1 if turn.is_summary else turn.round
        return [
            u
            for u in transcript.utterances
            if u.turn.round < before
            and (not u.turn.is_summary or (u.turn.agent == turn.agent and u.turn != turn))
        ]


def get_strategy(name: str) -> Strategy:
    """Instantiate the strategy registered as ``name`` (ConfigError lists the known names, or
    names the plugin whose entry is not a Strategy)."""
    found = STRATEGIES.get(name)
    if not (isinstance(found, type) and issubclass(found, Strategy)):
        where = STRATEGIES.origin(name)
        raise ConfigError(f"strategy {name!r}: {where} is not a subclass of {__name__}.Strategy")
    return found()
