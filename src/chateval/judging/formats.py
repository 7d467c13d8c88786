"""Verdict formats: one object gives the verdict instruction, the constraint and the parser.

A referee's verdict turn, as in ChatEval, explains first and scores last (``reasoning``, the
default): one request writes the assessment as free text (at most ``assessment_max_tokens``),
a second request continues that same text after ``Scores:`` with the score lines, constrained
by a regular expression (outlines-built structured decoding), so with a working backend every
verdict parses. The second request's prompt is the first one's prompt plus its answer, which
the engine's prefix cache already holds. Constraining one combined "free text, then scores"
pattern instead would either let a small model ramble until the budget ends with no scores, or
need a bounded free-text pattern whose index is too large to compile.

How the assessment is asked for, cut where it starts writing scores, and held to begin with an
explanation is ``judging.assessment``'s.

``reasoning=False`` keeps the older form, scores FIRST and one line of evidence after them,
all constrained in one request: a model that rambles can only ramble in the evidence. The score
lines hold only ASCII characters and every token adds at least one character, so
``max_tokens`` = (length of the longest score block) + slack always reaches the end of the scores.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from chateval.errors import ConfigError, VerdictError
from chateval.judging.assessment import EVIDENCE_LABEL, assessment_regex, cut_assessment

# Spare tokens beyond the longest score block: the "Evidence: " prefix and EOS.
_TOKEN_SLACK = 4
_EVIDENCE = "\nEvidence: "
# Printable ASCII without newline: one line that cannot run into anything after it.
_EVIDENCE_REGEX = "[ -~]*"
# Nothing is written into a prompt from here but the answer form and the instruction around it;
# the prompt builder adds the paper's words about bias, order and the other referees.


_PAIRWISE = re.compile(
    r"\s*Assistant 1: (?P<s1>\d+(?:\.5)?)\nAssistant 2: (?P<s2>\d+(?:\.5)?)(\nEvidence: (?P<ev>[^\n]*))?"
)
Score = int | float  # a half point (7.5) only where the format allows it


def _instruction(form: str, reasoning: bool) -> str:
    if reasoning:
        return (
            "Give your final verdict. First explain your evaluation, then give your scores on their "
            f"own lines, in exactly this form:\n{form}"
        )
    return f"Give your final verdict now, in exactly this form:\n{form}"


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
        return cut_assessment(text, "Assistant 1")

    @property
    def assessment_regex(self) -> str:
        """The constraint of the assessment request: an explanation comes first."""
        return assessment_regex("Assistant 1")

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
        return cut_assessment(text, self.dimensions[0].label)

    @property
    def assessment_regex(self) -> str:
        """The constraint of the assessment request: an explanation comes first."""
        return assessment_regex(self.dimensions[0].label)

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
