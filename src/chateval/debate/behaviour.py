"""Signs of a degenerate panel: referees that echo their instructions, recite the item, or copy each other.

A small model on a panel often does not judge at all: it repeats the prompt's instructions
back, restates the question and answers, repeats the words or the scores of the referee
before it, or runs out of tokens mid-sentence (chateval.evaluation.diagnostics.cut_off). Per referee and
debate:

- **echo**: a referee's utterance (discussion or assessment) repeats a run of ``ECHO_WORDS``
  consecutive words of the instructions chateval wrote into the prompt (system prompt, panel
  rules, personas, turn and verdict instructions, the task's framing), not of the data judged.
  Words are compared lower-cased, punctuation dropped.
- **recitation**: a referee's utterance (discussion or assessment) repeats a run of
  ``ECHO_WORDS`` consecutive words of the item's own text: a field as the data gives it
  (question, answer A, answer B; conversation, fact, response). Counted apart from echoes: the
  referee restates what it judges instead of judging it.
- **copied words**: a referee's utterance (discussion or assessment; never the constrained
  score lines) repeats a run of ``ECHO_WORDS`` words of an earlier utterance of *another*
  referee that its speaker could see (``Panel.visible``), other than a run of the item's own
  text (question and answers; conversation, fact and response), alone or as the task block
  frames it: every referee is shown those, and a small model often restates its prompt. A
  summary passes on the runs it quotes verbatim from the referees it summarized (not its own
  wording, nor the speaker's own words). The share counts, among the utterances that saw at
  least one such run, those that repeat one.
- **copied verdict**: a verdict whose scores equal those of another referee's verdict that its
  speaker could see (in one-by-one talk a referee sees the verdicts given before it in the last
  round); the record keeps whose verdicts it saw (``saw_verdicts_of``), for the permutation
  chance (chateval.evaluation.diagnostics.verdict_collapse).

A referee's turn is one with a referee speaking: not a summary (summary turns may carry the
index of the referee they summarize for).

Each copy share has a **chance baseline**: the same test on referees who could not have
copied. A referee's turn is *blind* when its speaker had seen no utterance of any other
speaker (referee or summarizer) when giving it: every turn of round 0 in simultaneous talk, the
first referee's round-0 turn in one-by-one talk, and the round-0 opinion probes (with
``verdict.reasoning``, a probe's assessment too). Two blind turns of different referees in the
same debate never saw each other, and the words and scores they share come from the prompt
they share (the item, the instructions), not from copying.

- words: a blind discussion or assessment (a probe's hidden assessment included) *agrees* when
  it shares a run of ``ECHO_WORDS`` words with a blind discussion or assessment of another
  referee of the same debate; the baseline is the share of agreeing ones among the blind ones
  that have such a partner.
- scores: a blind verdict or probe agrees when its scores equal those of a blind verdict or
  probe of another referee of the same debate; the baseline is the share of agreeing ones among
  the blind ones (that parse) with such a partner (that parses).

Like the copy shares, the baselines count per utterance (or verdict), and an utterance agrees
when any of its partners matches. One-by-one talk without opinion probes has a single blind
turn per debate, so no baseline: it is reported as None with a reason, never as 0. Pairs
across a pairwise item's two answer orders are not used: their prompts differ.
"""

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from chateval.core.items import PairwiseItem
from chateval.core.transcript import Debate, Utterance
from chateval.debate.panel import Panel
from chateval.errors import VerdictError
from chateval.judging.formats import DirectVerdict
from chateval.schema.verdicts import RefereeBehaviourRecord

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


Runs = set[tuple[str, ...]]
_TALK = ("discussion", "assessment")  # free text; "verdict" and "probe" are constrained scores
_SCORES = ("verdict", "probe")
T = TypeVar("T")

# Why a chance baseline is None (the module docstring defines the baselines).


@dataclass(frozen=True)
class RefereeBehaviour:
    """One referee in one debate: what it said, how much of it echoed the instructions,
    recited the item or repeated another referee's words, whether its verdict repeated one it
    saw (and whose it saw), and how its blind turns compare with the other referees' blind
    turns (the chance baselines)."""

    utterances: int
    echoing: int
    saw_verdict: bool
    copied_from: str | None
    saw_words: int  # utterances that saw a run of another referee's words
    copied_words: int  # of those, the ones repeating such a run
    blind_words: int  # blind utterances with a blind utterance of another referee to compare
    blind_words_shared: int  # of those, the ones sharing a run with one
    blind_verdicts: int  # blind verdicts (parsed) with a blind verdict of another referee (parsed)
    blind_verdicts_equal: int  # of those, the ones with equal scores to one
    reciting: int = 0  # utterances repeating a run of the item's own text
    saw_verdicts_of: tuple[str, ...] = ()  # the referees whose parsed verdict its verdict saw

    def as_dict(self) -> RefereeBehaviourRecord:
        return {
            "utterances": self.utterances,
            "echoing": self.echoing,
            "saw_verdict": self.saw_verdict,
            "copied_from": self.copied_from,
            "saw_words": self.saw_words,
            "copied_words": self.copied_words,
            "blind_words": self.blind_words,
            "blind_words_shared": self.blind_words_shared,
            "blind_verdicts": self.blind_verdicts,
            "blind_verdicts_equal": self.blind_verdicts_equal,
            "reciting": self.reciting,
            "saw_verdicts_of": list(self.saw_verdicts_of),
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


def _others_runs(debate: Debate, panel: Panel, seen: Utterance, speaker: str) -> Runs:
    """The runs of other referees' words that ``seen`` puts before ``speaker``: all of a referee's
    talk, and of a summary the runs it quotes verbatim from the talk it summarized."""
    if seen.kind in _TALK:
        return word_runs(seen.text) if seen.speaker != speaker else set()
    if seen.kind == "summary":
        quoted: Runs = set()
        for source in panel.visible(debate, seen.turn):
            quoted |= _others_runs(debate, panel, source, speaker)
        return word_runs(seen.text) & quoted
    return set()


def _agreeing(blind: Sequence[tuple[str, T]], speaker: str, agree: Callable[[T, T], bool]) -> tuple[int, int]:
    """(``speaker``'s blind answers that have another referee's blind answer to compare with,
    those that agree with at least one of them)."""
    others = [answer for name, answer in blind if name != speaker]
    if not others:
        return 0, 0
    mine = [answer for name, answer in blind if name == speaker]
    return len(mine), sum(any(agree(answer, other) for other in others) for answer in mine)


def debate_behaviour(debate: Debate, panel: Panel, detector: EchoDetector) -> dict[str, RefereeBehaviour]:
    """Each referee's behaviour in ``debate``, by speaker name (probes are not counted, except
    as blind turns of the chance baselines)."""
    # Probes are hidden, but a settled early-stop check is the debate's verdict (its assessment too).
    verdicts = {u.turn for u in debate.transcript.utterances if u.kind == "verdict"}
    said = [
        u
        for u in debate.transcript.utterances
        if not u.turn.hidden or u.turn in verdicts or u.turn.scored() in verdicts
    ]
    # A referee's turn: summaries may carry the index of the referee they summarize for.
    blind = [
        u
        for u in debate.transcript.utterances
        if u.turn.agent is not None
        and not u.turn.is_summary
        and all(v.speaker == u.speaker for v in panel.visible(debate, u.turn))
    ]
    # The item's text, alone or as the task block frames it, is in every referee's prompt:
    # restating it is not copying another referee.
    item = debate.item
    fields = (
        (item.question, item.answer_a, item.answer_b)
        if isinstance(item, PairwiseItem)
        else (item.context, item.response, item.knowledge or "")
    )
    shown = [*fields, panel.prompts.task_block(item, debate.swapped)]
    item_runs: Runs = set().union(*(word_runs(text) for text in shown))
    # Recitation is of the item's text itself, field by field: the task block's framing is
    # the instructions' (an echo), and a run across two fields' framing is neither's words.
    field_runs: Runs = set().union(*(word_runs(text) for text in fields))
    blind_talk = [(u.speaker, word_runs(u.text) - item_runs) for u in blind if u.kind in _TALK]
    blind_scores = [
        (u.speaker, opinion)
        for u in blind
        if u.kind in _SCORES and (opinion := _opinion(panel, u)) is not None
    ]
    out: dict[str, RefereeBehaviour] = {}
    for agent in panel.agents:
        mine = [u for u in said if u.speaker == agent.name]
        talk = [u for u in mine if u.kind in _TALK]
        verdict = next((u for u in mine if u.kind == "verdict"), None)
        saw_verdict, copied_from = False, None
        seen_verdicts: dict[str, None] = {}  # an ordered set
        if verdict is not None:
            own = _opinion(panel, verdict)
            for other in panel.visible(debate, verdict.turn):
                if other.kind != "verdict" or other.speaker == agent.name:
                    continue
                theirs = _opinion(panel, other)
                if theirs is not None:
                    saw_verdict = True
                    seen_verdicts[other.speaker] = None
                if own is not None and own == theirs and copied_from is None:
                    copied_from = other.speaker
        saw_words = copied_words = 0
        for u in talk:
            seen: Runs = set()
            for other in panel.visible(debate, u.turn):
                seen |= _others_runs(debate, panel, other, agent.name)
            seen -= item_runs
            if seen:
                saw_words += 1
                copied_words += not seen.isdisjoint(word_runs(u.text))
        out[agent.name] = RefereeBehaviour(
            len(talk),
            sum(detector.echoes(u.text) for u in talk),
            saw_verdict,
            copied_from,
            saw_words,
            copied_words,
            *_agreeing(blind_talk, agent.name, lambda a, b: not a.isdisjoint(b)),
            *_agreeing(blind_scores, agent.name, lambda a, b: a == b),
            sum(not field_runs.isdisjoint(word_runs(u.text)) for u in talk),
            tuple(seen_verdicts),
        )
    return out
