"""Signs of a degenerate panel: referees that echo their instructions or copy a verdict.

A small model on a panel often does not judge at all: it repeats the prompt's instructions
back, or gives the same scores as the referee before it. Two per-referee signals expose that:

- **echo**: a referee's utterance (discussion or assessment) repeats a run of ``ECHO_WORDS``
  consecutive words of the instructions chateval wrote into the prompt (system prompt, panel
  rules, personas, turn and verdict instructions, the task's framing), not of the data judged.
  Words are compared lower-cased, punctuation dropped.
- **copy**: a verdict whose scores equal those of another referee's verdict that its speaker
  could see (in one-by-one talk a referee sees the verdicts given before it in the last round).
"""

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from chateval.debate.panel import Debate, Panel
from chateval.errors import VerdictError
from chateval.transcript import Utterance
from chateval.verdicts import DirectVerdict

ECHO_WORDS = 8
_WORD = re.compile(r"[a-z0-9']+")


def word_runs(text: str, n: int = ECHO_WORDS) -> set[tuple[str, ...]]:
    """Every run of ``n`` consecutive words of ``text`` (lower-cased, punctuation dropped)."""
    words = _WORD.findall(text.lower())
    return {tuple(words[i : i + n]) for i in range(len(words) - n + 1)}


class EchoDetector:
    """Tells whether a text repeats ``ECHO_WORDS`` words in a row of some instructions."""

    def __init__(self, instructions: Iterable[str], n: int = ECHO_WORDS) -> None:
        self.n = n
        self.runs: set[tuple[str, ...]] = set()
        for text in instructions:
            self.runs |= word_runs(text, n)

    def echoes(self, text: str) -> bool:
        return not self.runs.isdisjoint(word_runs(text, self.n))


@dataclass(frozen=True)
class RefereeBehaviour:
    """One referee in one debate: what it said, how much of it echoed the instructions, and
    whether its verdict repeated one it saw."""

    utterances: int
    echoing: int
    saw_verdict: bool
    copied_from: str | None

    def as_dict(self) -> dict[str, Any]:
        return {
            "utterances": self.utterances,
            "echoing": self.echoing,
            "saw_verdict": self.saw_verdict,
            "copied_from": self.copied_from,
        }


def _opinion(panel: Panel, utterance: Utterance) -> object | None:
    """The comparable content of a verdict (its scores), or None when it does not parse."""
    try:
        verdict = panel.verdict_format.parse(utterance.text)
    except VerdictError:
        return None
    if isinstance(verdict, DirectVerdict):
        return tuple(sorted(verdict.scores.items()))
    return (verdict.score_1, verdict.score_2)


def debate_behaviour(debate: Debate, panel: Panel, detector: EchoDetector) -> dict[str, RefereeBehaviour]:
    """Each referee's behaviour in ``debate``, by speaker name (probes are not counted)."""
    # Probes are hidden, but a settled early-stop check is the debate's verdict (its assessment too).
    verdicts = {u.turn for u in debate.transcript.utterances if u.kind == "verdict"}
    said = [
        u
        for u in debate.transcript.utterances
        if not u.turn.hidden or u.turn in verdicts or u.turn.scored() in verdicts
    ]
    out: dict[str, RefereeBehaviour] = {}
    for agent in panel.agents:
        mine = [u for u in said if u.speaker == agent.name]
        talk = [u for u in mine if u.kind in ("discussion", "assessment")]
        verdict = next((u for u in mine if u.kind == "verdict"), None)
        saw_verdict, copied_from = False, None
        if verdict is not None:
            own = _opinion(panel, verdict)
            for other in panel.visible(debate, verdict.turn):
                if other.kind != "verdict" or other.speaker == agent.name:
                    continue
                theirs = _opinion(panel, other)
                saw_verdict = saw_verdict or theirs is not None
                if own is not None and own == theirs and copied_from is None:
                    copied_from = other.speaker
        out[agent.name] = RefereeBehaviour(
            len(talk), sum(detector.echoes(u.text) for u in talk), saw_verdict, copied_from
        )
    return out


def parroting_summary(behaviours: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Echo and copy shares over referee-debates (``RefereeBehaviour.as_dict`` records).

    ``echo_share``: utterances echoing the instructions / utterances. ``copy_share``: verdicts
    equal to a verdict their speaker saw / verdicts that saw one (None when none did).
    """
    utterances = sum(b["utterances"] for b in behaviours)
    echoing = sum(b["echoing"] for b in behaviours)
    exposed = [b for b in behaviours if b["saw_verdict"]]
    copied = sum(1 for b in exposed if b["copied_from"])
    return {
        "utterances": utterances,
        "echoing": echoing,
        "echo_share": echoing / utterances if utterances else None,
        "verdicts_that_saw_one": len(exposed),
        "copied": copied,
        "copy_share": copied / len(exposed) if exposed else None,
    }
