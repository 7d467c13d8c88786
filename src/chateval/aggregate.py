"""Turning referees' final utterances into verdicts and a panel decision.

Pairwise: each referee's winner is the higher-scored answer (equal scores: tie), mapped back
from displayed position to A/B; the panel's label is the strict majority of referees, and a tie
when no label has one. Direct: the panel's score per dimension is the mean over referees.
A verdict that does not parse is recorded as a failure with its raw text, never as a tie.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from chateval.data.items import Label
from chateval.debate.panel import Debate
from chateval.errors import VerdictError
from chateval.verdicts import DirectFormat, DirectVerdict, PairwiseFormat, PairwiseVerdict, VerdictFormat


@dataclass(frozen=True)
class RefereeVerdict:
    """One referee's parsed verdict, or the raw text and error when it failed to parse."""

    agent: str
    raw: str
    verdict: PairwiseVerdict | DirectVerdict | None
    error: str | None = None


def referee_verdicts(debate: Debate, fmt: VerdictFormat) -> list[RefereeVerdict]:
    """Parse the final utterance of each referee of ``debate``."""
    out = []
    for utterance in debate.transcript.utterances:
        if utterance.kind != "verdict":
            continue
        try:
            out.append(RefereeVerdict(utterance.speaker, utterance.text, fmt.parse(utterance.text)))
        except VerdictError as exc:
            out.append(RefereeVerdict(utterance.speaker, utterance.text, None, str(exc)))
    return out


def pairwise_winner(verdict: PairwiseVerdict, swapped: bool) -> Label:
    """The winner in item terms (A/B) of a verdict given on the shown order."""
    shown = verdict.winner_shown
    if shown == "tie":
        return "tie"
    first_is_a = not swapped
    return "A" if (shown == "1") == first_is_a else "B"


def majority_label(labels: Sequence[Label]) -> Label | None:
    """Strict majority of ``labels``; tie when none has one; None when there are no labels."""
    if not labels:
        return None
    label, count = Counter(labels).most_common(1)[0]
    return label if count * 2 > len(labels) else "tie"


def aggregate_pairwise(debate: Debate, fmt: PairwiseFormat) -> dict[str, Any]:
    """The verdict record of a pairwise debate."""
    referees = referee_verdicts(debate, fmt)
    votes: list[Label] = []
    rows = []
    for ref in referees:
        row: dict[str, Any] = {"agent": ref.agent}
        if isinstance(ref.verdict, PairwiseVerdict):
            winner = pairwise_winner(ref.verdict, debate.swapped)
            votes.append(winner)
            score_a, score_b = (
                (ref.verdict.score_2, ref.verdict.score_1)
                if debate.swapped
                else (ref.verdict.score_1, ref.verdict.score_2)
            )
            row.update(score_a=score_a, score_b=score_b, winner=winner, evidence=ref.verdict.evidence)
        else:
            row.update(error=ref.error, raw=ref.raw)
        rows.append(row)
    return {
        "referees": rows,
        "label": majority_label(votes),
        "parse_failures": sum(1 for ref in referees if ref.verdict is None),
    }


def aggregate_direct(debate: Debate, fmt: DirectFormat) -> dict[str, Any]:
    """The verdict record of a direct-scoring debate."""
    referees = referee_verdicts(debate, fmt)
    rows: list[dict[str, Any]] = []
    parsed: list[DirectVerdict] = []
    for ref in referees:
        if isinstance(ref.verdict, DirectVerdict):
            parsed.append(ref.verdict)
            rows.append(
                {"agent": ref.agent, "scores": dict(ref.verdict.scores), "evidence": ref.verdict.evidence}
            )
        else:
            rows.append({"agent": ref.agent, "error": ref.error, "raw": ref.raw})
    scores = {d.name: fmean(v.scores[d.name] for v in parsed) for d in fmt.dimensions} if parsed else None
    return {
        "referees": rows,
        "scores": scores,
        "parse_failures": len(referees) - len(parsed),
    }


def aggregate(debate: Debate, fmt: VerdictFormat) -> dict[str, Any]:
    """The verdict record of ``debate`` for its task."""
    if isinstance(fmt, PairwiseFormat):
        return aggregate_pairwise(debate, fmt)
    return aggregate_direct(debate, fmt)
