"""Verdict formats: one object gives the answer form shown to referees, the constraint, the parser.

The constraint is a regular expression handed to the backend (outlines-built structured
decoding), so with a working backend every final answer parses. The scores come FIRST and the
one-line evidence after them: a small model that rambles can only ramble in the evidence, after
the scores are already written, so it can never starve the verdict (a bounded evidence-first
pattern was tried: a 240-character bound makes the regex index too large to compile within
vLLM's 5 s limit). The score lines hold only ASCII characters and every token adds at least one
character, so ``max_tokens`` = (length of the longest score block) + evidence budget always
reaches the end of the scores. The reasoning before the verdict is the debate itself.
"""

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from chateval.errors import ConfigError, VerdictError

# Spare tokens beyond the longest score block: the "Evidence: " prefix and EOS.
_TOKEN_SLACK = 4
_EVIDENCE = "\nEvidence: "
# Printable ASCII without newline: one line that cannot run into anything after it.
_EVIDENCE_REGEX = "[ -~]*"


def _int_range_regex(low: int, high: int) -> str:
    """An alternation matching exactly the integers low..high (longest first, so 10 beats 1)."""
    values = sorted(range(low, high + 1), key=lambda v: (-len(str(v)), -v))
    return "(" + "|".join(str(v) for v in values) + ")"


@dataclass(frozen=True)
class PairwiseVerdict:
    """A referee's scores for the answers in the order it saw them (1 = first shown)."""

    score_1: int
    score_2: int
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
    """Two assistants each scored low..high (1..10 by default), then one line of evidence."""

    low: int = 1
    high: int = 10
    evidence_max_tokens: int = 64

    def __post_init__(self) -> None:
        if not 0 <= self.low < self.high:
            raise ConfigError(f"pairwise score scale {self.low}..{self.high} is invalid")
        if self.evidence_max_tokens < 1:
            raise ConfigError("evidence_max_tokens must be at least 1")

    @property
    def form(self) -> str:
        return (
            f"Assistant 1: <score from {self.low} to {self.high}>\n"
            f"Assistant 2: <score from {self.low} to {self.high}>\n"
            "Evidence: <one line: your main reason>\n"
            "A higher score means a better answer; give equal scores only if they are equally good."
        )

    @property
    def regex(self) -> str:
        score = _int_range_regex(self.low, self.high)
        return f"Assistant 1: {score}\nAssistant 2: {score}{re.escape(_EVIDENCE)}{_EVIDENCE_REGEX}"

    @property
    def max_tokens(self) -> int:
        longest = len(f"Assistant 1: {self.high}\nAssistant 2: {self.high}{_EVIDENCE}")
        return longest + self.evidence_max_tokens + _TOKEN_SLACK

    def parse(self, text: str) -> PairwiseVerdict:
        """Parse a completion (the evidence may be cut short); raise VerdictError if not."""
        match = re.match(
            r"\s*Assistant 1: (?P<s1>\d+)\nAssistant 2: (?P<s2>\d+)(\nEvidence: (?P<ev>[^\n]*))?",
            text,
        )
        if match is None:
            raise VerdictError(f"pairwise verdict does not match the format: {text[-200:]!r}")
        s1, s2 = int(match["s1"]), int(match["s2"])
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

    scores: Mapping[str, int]
    evidence: str


@dataclass(frozen=True)
class DirectFormat:
    """One score line per dimension, then one line of evidence."""

    dimensions: Sequence[Dimension]
    evidence_max_tokens: int = 64

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
        if self.evidence_max_tokens < 1:
            raise ConfigError("evidence_max_tokens must be at least 1")

    @property
    def form(self) -> str:
        lines = "\n".join(f"{d.label}: <score from {d.low} to {d.high}>" for d in self.dimensions)
        return lines + "\nEvidence: <one line: your main reason>"

    @property
    def regex(self) -> str:
        lines = "\n".join(f"{re.escape(d.label)}: {_int_range_regex(d.low, d.high)}" for d in self.dimensions)
        return f"{lines}{re.escape(_EVIDENCE)}{_EVIDENCE_REGEX}"

    @property
    def max_tokens(self) -> int:
        longest = len("\n".join(f"{d.label}: {d.high}" for d in self.dimensions) + _EVIDENCE)
        return longest + self.evidence_max_tokens + _TOKEN_SLACK

    def parse(self, text: str) -> DirectVerdict:
        """Parse a completion (the evidence may be cut short); raise VerdictError if not."""
        match = re.search(r"^Evidence: ([^\n]*)", text, flags=re.MULTILINE)
        scores: dict[str, int] = {}
        for d in self.dimensions:
            found = re.search(rf"^{re.escape(d.label)}: (\d+)\s*$", text, flags=re.MULTILINE)
            if found is None:
                raise VerdictError(f"direct verdict lacks a score for {d.name!r}: {text[-200:]!r}")
            value = int(found[1])
            if not d.low <= value <= d.high:
                raise VerdictError(f"{d.name} score {value} outside {d.low}..{d.high}")
            scores[d.name] = value
        return DirectVerdict(scores=scores, evidence=match[1].strip() if match else "")


VerdictFormat = PairwiseFormat | DirectFormat
