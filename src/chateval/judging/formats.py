"""Verdict formats: one object gives the verdict instruction, the constraint and the parser.

A referee's verdict turn, as in ChatEval, explains first and scores last (``reasoning``, the
default): one request writes the assessment as free text (at most ``assessment_max_tokens``),
a second request continues that same text after ``Scores:`` with the score lines, constrained
by a regular expression (outlines-built structured decoding), so with a working backend every
verdict parses. The second request's prompt is the first one's prompt plus its answer, which
the engine's prefix cache already holds. Constraining one combined "free text, then scores"
pattern instead would either let a small model ramble until the budget ends with no scores, or
need a bounded free-text pattern whose index is too large to compile.

The assessment request is asked for the whole verdict in the paper's strict form
("Evaluation evidence: ..." then the score lines); where its answer starts writing scores (a
``Scores:`` line or the first score line), it is cut, and the constrained request writes them:
the scores come from the constrained decoder only, never from free text that could disagree
with them. So that an explanation cannot be skipped, the assessment request is held to
``assessment_regex``: its first words (after an optional "Evaluation evidence:" label) may not
be a score line, a ``Scores:`` heading or a line break; what follows is free.

``reasoning=False`` keeps the older form, scores FIRST and one line of evidence after them,
all constrained in one request: a model that rambles can only ramble in the evidence. The score
lines hold only ASCII characters and every token adds at least one character, so
``max_tokens`` = (length of the longest score block) + slack always reaches the end of the scores.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from chateval.errors import ConfigError, VerdictError

# Spare tokens beyond the longest score block: the "Evidence: " prefix and EOS.
_TOKEN_SLACK = 4
_EVIDENCE = "\nEvidence: "
# Printable ASCII without newline: one line that cannot run into anything after it.
_EVIDENCE_REGEX = "[ -~]*"
# What the scoring request appends to a referee's assessment before its constrained score
# lines (which start on the next line).
SCORES_LEAD = "Scores:"
# The label the paper's strict format puts before the explanation.
EVIDENCE_LABEL = "Evaluation evidence:"
# Nothing is written into a prompt from here but the answer form and the instruction around it;
# the prompt builder adds the paper's words about bias, order and the other referees.


_PAIRWISE = re.compile(
    r"\s*Assistant 1: (?P<s1>\d+(?:\.5)?)\nAssistant 2: (?P<s2>\d+(?:\.5)?)(\nEvidence: (?P<ev>[^\n]*))?"
)
Score = int | float  # a half point (7.5) only where the format allows it


def scoring_lead(assessment: str) -> str:
    """The text a scoring request continues: the referee's assessment, then ``Scores:``."""
    return f"{assessment}\n\n{SCORES_LEAD}" if assessment else SCORES_LEAD


def verdict_text(assessment: str | None, scores: str) -> str:
    """A whole verdict as a later speaker sees it: the assessment and the score lines."""
    return f"{scoring_lead(assessment)}\n{scores}" if assessment is not None else scores


def _assessment_only(text: str, first_score_label: str) -> str:
    """``text`` up to where its writer starts its scores (a ``Scores:`` line, or the first score
    line, e.g. ``Assistant 1: 7``): the constrained request writes the scores from there. A
    lone "Evaluation evidence:" label with nothing after it is no explanation: empty."""
    start = re.search(
        rf"(?im)^[ \t*#]*(?:{re.escape(SCORES_LEAD)}|{re.escape(first_score_label)} ?:[ \t]*\d)", text
    )
    kept = (text[: start.start()] if start else text).strip()
    return "" if kept.lower().rstrip(" :") == EVIDENCE_LABEL.lower().rstrip(":") else kept


def explanation(assessment: str) -> str:
    """What an assessment explains, without the paper's "Evaluation evidence:" label."""
    if assessment[: len(EVIDENCE_LABEL)].lower() == EVIDENCE_LABEL.lower():
        return assessment[len(EVIDENCE_LABEL) :].strip()
    return assessment.strip()


def _instruction(form: str, reasoning: bool) -> str:
    if reasoning:
        return (
            "Give your final verdict. First explain your evaluation, then give your scores on their "
            f"own lines, in exactly this form:\n{form}"
        )
    return f"Give your final verdict now, in exactly this form:\n{form}"


def _escape(char: str) -> str:
    """``char`` as a regular expression (spaces and letters unescaped: the engines' regular
    expression syntax is not Python's, and both read them the same way bare)."""
    if char in "\n\t":
        return {"\n": r"\n", "\t": r"\t"}[char]
    return char if char.isalnum() or char == " " else re.escape(char)


def _either_case(char: str) -> str:
    return f"[{char.lower()}{char.upper()}]" if char.isalpha() else _escape(char)


# The characters an explanation may begin with: a word or a quotation, never a digit, a space,
# a line break or markup (``**Assistant 1:** 7`` would slip past the score-line prefixes).
_FIRST_CHARACTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz\"'("
# Any text at all: what follows an explanation's safe first words.
FREE_TAIL = r"[\s\S]*"


def _explanation_first(forbidden: Sequence[str], label: str) -> str:
    """A regular expression for the texts that begin (after one optional space) with one of
    ``_FIRST_CHARACTERS`` and with none of the ``forbidden`` prefixes (compared
    case-insensitively), where ``label`` (and a space) may come first and the same holds after it.

    Built as the complement of the prefixes' trie, without lookahead (the engines' regular
    expressions have none) and with one way to read each text: the engines' automata may drop
    a way of reading that another shadows. A text that stops inside a prefix ("Sco") does not
    match: the constraint only lets a model end its text after the first words are safe.
    """
    trie: dict[str, Any] = {}
    for word in [*forbidden, label]:
        node = trie
        for char in word.lower():
            node = node.setdefault(char, {})
        node[""] = word is label  # the end of a prefix: forbidden (False) or the label (True)

    def branch(node: dict[str, Any], root: bool, after_label: str | None) -> str:
        """``node``'s texts; ``after_label`` is what may follow the label (None: it is forbidden)."""
        chars = [c for c in node if c]
        taken = {variant for c in chars for variant in (c.lower(), c.upper())}
        if root:
            other = "[" + "".join(_escape(c) for c in _FIRST_CHARACTERS if c not in taken) + "]"
        else:
            other = "[^" + "".join(_escape(c) for c in sorted(taken)) + "]"
        options = [other + FREE_TAIL]
        for char in chars:
            child = node[char]
            if "" not in child:
                options.append(_either_case(char) + branch(child, False, after_label))
            elif child[""] and after_label is not None:  # the label, then the same rule again
                options.append(_either_case(char) + " ?" + after_label)
        # No text ends inside a prefix: outlines-core's index loses the way on from an
        # accepting state into one that is not (seen with "A(bc)?" and the text "Ab"), so
        # every accepting state lies in a free tail, which only leads to accepting states.
        return "(" + "|".join(options) + ")"

    # One space may come first: outside the paper layout the answer continues a lead ("Critic:").
    return " ?" + branch(trie, True, branch(trie, True, None))


def _assessment_regex(first: str) -> str:
    """The constraint of an assessment: after an optional "Evaluation evidence:" label, its first
    words are not the first score line or a ``Score``/``Scores:`` heading; a line break cannot
    come before them."""
    # The cut (``_assessment_only``) reads the first score line as "<label>:" or "<label> :":
    # the same two are forbidden here, so what the constraint lets through is never cut to
    # nothing. Few prefixes: the engines compile the expression's every state against the
    # whole vocabulary (about 0.03 s a state on two cores). ``first``: the first score's label.
    forbidden = ["score", f"{first}:", f"{first} :"]
    forbidden += [EVIDENCE_LABEL.replace(":", " :"), EVIDENCE_LABEL.replace(":", "\n")]
    return _explanation_first(forbidden, EVIDENCE_LABEL)


def _values(low: int, high: int, half_points: bool) -> list[str]:
    """The scores of a scale as written: the integers low..high, with ``half_points`` the
    halves between them (7.5) too; longest first."""
    values = [str(v) for v in range(low, high + 1)]
    if half_points:
        values += [f"{v}.5" for v in range(low, high)]
    return sorted(values, key=lambda v: (-len(v), v))


def _scale_regex(low: int, high: int, half_points: bool = False) -> str:
    """An alternation matching exactly the scale's scores (longest first, so 10 beats 1)."""
    return "(" + "|".join(re.escape(v) for v in _values(low, high, half_points)) + ")"


def _score(text: str, half_points: bool) -> Score:
    """A score as written: an integer, or with ``half_points`` a half (VerdictError otherwise)."""
    if text.endswith(".5"):
        if not half_points:
            raise VerdictError(f"half point {text} on a scale of whole points (verdict.half_points: false)")
        return float(text)
    return int(text)


@dataclass(frozen=True)
class PairwiseVerdict:
    """A referee's scores for the answers in the order it saw them (1 = first shown)."""

    score_1: Score
    score_2: Score
    evidence: str

    @property
    def winner_shown(self) -> Literal["1", "2", "tie"]:
        """Winner by displayed position."""
        if self.score_1 > self.score_2:
            return "1"
        if self.score_2 > self.score_1:
            return "2"
        return "tie"


@dataclass(frozen=True)
class PairwiseFormat:
    """Two assistants each scored low..high (1..10 by default).

    ``reasoning``: an assessment first, then the two score lines; otherwise the score lines
    then one line of evidence.
    """

    low: int = 1
    high: int = 10
    evidence_max_tokens: int = 64
    reasoning: bool = True
    assessment_max_tokens: int = 256
    half_points: bool = False  # 7.5 allowed, as the 2023 code parsed numbers

    def __post_init__(self) -> None:
        if not 0 <= self.low < self.high:
            raise ConfigError(f"pairwise score scale {self.low}..{self.high} is invalid")
        if self.evidence_max_tokens < 1 or self.assessment_max_tokens < 1:
            raise ConfigError("evidence_max_tokens and reasoning_max_tokens must be at least 1")

    def _scores(self, value: str) -> str:
        return f"Assistant 1: {value}\nAssistant 2: {value}"

    @property
    def form(self) -> str:
        """The answer form shown to referees: the paper's (explanation, then the score lines),
        or without reasoning the score lines and one line of evidence."""
        scores = self._scores(f"<score from {self.low} to {self.high}>")
        if self.reasoning:
            return f"{EVIDENCE_LABEL} <your explanation>\n{scores}"
        return f"{scores}\nEvidence: <one line: your main reason>"

    @property
    def instruction(self) -> str:
        """What a referee is asked at its verdict turn."""
        return _instruction(self.form, self.reasoning)

    @property
    def regex(self) -> str:
        """The constraint of the scores request (with reasoning: what follows ``Scores:``)."""
        score = _scale_regex(self.low, self.high, self.half_points)
        if self.reasoning:
            return "\n" + self._scores(score)
        return f"{self._scores(score)}{re.escape(_EVIDENCE)}{_EVIDENCE_REGEX}"

    @property
    def max_tokens(self) -> int:
        """Token budget of the scores request: always enough to finish the score lines."""
        widest = _values(self.low, self.high, self.half_points)[0]
        if self.reasoning:
            return len("\n" + self._scores(widest)) + _TOKEN_SLACK
        longest = len(f"{self._scores(widest)}{_EVIDENCE}")
        return longest + self.evidence_max_tokens + _TOKEN_SLACK

    def assessment(self, text: str) -> str:
        """A referee's assessment without any scores it began to write itself."""
        return _assessment_only(text, "Assistant 1")

    @property
    def assessment_regex(self) -> str:
        """The constraint of the assessment request: an explanation comes first."""
        return _assessment_regex("Assistant 1")

    @property
    def scales(self) -> tuple[tuple[int, ...], ...]:
        """The allowed values of each score line, in order."""
        values = tuple(range(self.low, self.high + 1))
        return (values, values)

    def score_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Where each score value is in ``text`` (a scores completion), in score-line order."""
        match = _PAIRWISE.match(text)
        return [match.span("s1"), match.span("s2")] if match else None

    def parse(self, text: str) -> PairwiseVerdict:
        """Parse a completion (the evidence may be cut short); raise VerdictError if not."""
        match = _PAIRWISE.match(text)
        if match is None:
            raise VerdictError(f"pairwise verdict does not match the format: {text[-200:]!r}")
        s1, s2 = _score(match["s1"], self.half_points), _score(match["s2"], self.half_points)
        for s in (s1, s2):
            if not self.low <= s <= self.high:
                raise VerdictError(f"score {s} outside {self.low}..{self.high}")
        return PairwiseVerdict(score_1=s1, score_2=s2, evidence=(match["ev"] or "").strip())


@dataclass(frozen=True)
class Dimension:
    """One quality scored in direct scoring, on an integer scale low..high."""

    name: str
    description: str
    low: int = 1
    high: int = 5

    @property
    def label(self) -> str:
        return self.name.replace("_", " ").capitalize()


@dataclass(frozen=True)
class DirectVerdict:
    """A referee's score per dimension."""

    scores: Mapping[str, Score]
    evidence: str


@dataclass(frozen=True)
class DirectFormat:
    """One score line per dimension (after an assessment, or followed by one line of evidence)."""

    dimensions: Sequence[Dimension]
    evidence_max_tokens: int = 64
    reasoning: bool = True
    assessment_max_tokens: int = 256
    half_points: bool = False  # 2.5 allowed, as the 2023 code parsed numbers

    def __post_init__(self) -> None:
        if not self.dimensions:
            raise ConfigError("direct scoring needs at least one dimension")
        names = [d.name for d in self.dimensions]
        if len(set(names)) != len(names):
            raise ConfigError(f"duplicate dimension names in {names}")
        for d in self.dimensions:
            if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", d.name):
                raise ConfigError(f"dimension name {d.name!r} must be letters, digits and underscores")
            if not 0 <= d.low < d.high:
                raise ConfigError(f"dimension {d.name!r}: scale {d.low}..{d.high} is invalid")
        if self.evidence_max_tokens < 1 or self.assessment_max_tokens < 1:
            raise ConfigError("evidence_max_tokens and reasoning_max_tokens must be at least 1")

    @property
    def form(self) -> str:
        """The answer form shown to referees (explanation first, as the pairwise form)."""
        lines = "\n".join(f"{d.label}: <score from {d.low} to {d.high}>" for d in self.dimensions)
        if self.reasoning:
            return f"{EVIDENCE_LABEL} <your explanation>\n{lines}"
        return lines + "\nEvidence: <one line: your main reason>"

    @property
    def instruction(self) -> str:
        """What a referee is asked at its verdict turn."""
        return _instruction(self.form, self.reasoning)

    @property
    def regex(self) -> str:
        """The constraint of the scores request (with reasoning: what follows ``Scores:``)."""
        lines = "\n".join(
            f"{re.escape(d.label)}: {_scale_regex(d.low, d.high, self.half_points)}" for d in self.dimensions
        )
        if self.reasoning:
            return "\n" + lines
        return f"{lines}{re.escape(_EVIDENCE)}{_EVIDENCE_REGEX}"

    @property
    def max_tokens(self) -> int:
        """Token budget of the scores request: always enough to finish the score lines."""
        widest = [f"{d.label}: {_values(d.low, d.high, self.half_points)[0]}" for d in self.dimensions]
        longest = len("\n".join(widest))
        if self.reasoning:
            return longest + 1 + _TOKEN_SLACK
        return longest + len(_EVIDENCE) + self.evidence_max_tokens + _TOKEN_SLACK

    def assessment(self, text: str) -> str:
        """A referee's assessment without any scores it began to write itself."""
        return _assessment_only(text, self.dimensions[0].label)

    @property
    def assessment_regex(self) -> str:
        """The constraint of the assessment request: an explanation comes first."""
        return _assessment_regex(self.dimensions[0].label)

    @property
    def scales(self) -> tuple[tuple[int, ...], ...]:
        """The allowed values of each score line (one per dimension), in order."""
        return tuple(tuple(range(d.low, d.high + 1)) for d in self.dimensions)

    def _score_line(self, d: Dimension, text: str) -> re.Match[str] | None:
        return re.search(rf"^{re.escape(d.label)}: (\d+(?:\.5)?)\s*$", text, flags=re.MULTILINE)

    def score_spans(self, text: str) -> list[tuple[int, int]] | None:
        """Where each score value is in ``text`` (a scores completion), one per dimension."""
        found = [self._score_line(d, text) for d in self.dimensions]
        return [m.span(1) for m in found if m] if all(found) else None

    def parse(self, text: str) -> DirectVerdict:
        """Parse a completion (the evidence may be cut short); raise VerdictError if not."""
        match = re.search(r"^Evidence: ([^\n]*)", text, flags=re.MULTILINE)
        scores: dict[str, Score] = {}
        for d in self.dimensions:
            found = self._score_line(d, text)
            if found is None:
                raise VerdictError(f"direct verdict lacks a score for {d.name!r}: {text[-200:]!r}")
            value = _score(found[1], self.half_points)
            if not d.low <= value <= d.high:
                raise VerdictError(f"{d.name} score {value} outside {d.low}..{d.high}")
            scores[d.name] = value
        return DirectVerdict(scores=scores, evidence=match[1].strip() if match else "")


VerdictFormat = PairwiseFormat | DirectFormat
