"""Turns that did not finish, and assessments that say nothing.

**Cut off**: an utterance that ended at its token cap (``finish_reason`` "length"), counted per
kind: a referee's discussions, its assessments (the hidden assessments of probes and early-stop
checks included) and, per record, the summarizer's summaries; and whether the assessment of the
referee's verdict was cut off (the constrained scores that follow are then forced on unfinished
reasoning).

**Empty**: an assessment whose text is empty. The assessment request asks for an explanation,
then the scores; the panel cuts its answer where the scores start
(``chateval.judging.formats``) and the constrained scores request writes them. A referee that
opens with its score lines therefore leaves an empty assessment: its verdict still parses (the
constrained request gives the scores), but nothing explains it. Counted per referee and
debate over all its assessments (probes' and checks' included), and whether its verdict's own
assessment is empty; the latter is also read from a verdict row's ``assessment``, which rows of
earlier releases already hold.
"""

from collections.abc import Iterable, Sequence

from chateval.core.transcript import Debate
from chateval.evaluation.diagnostics.parroting import NOT_RECORDED
from chateval.schema.diagnostics import CutOffKind, CutOffSummary, EmptyAssessments
from chateval.schema.verdicts import RefereeCutOff, RefereeRow, SummariesCutOff


def _empty(text: str) -> bool:
    return not text.strip()


def referee_cut_off(debate: Debate, speaker: str) -> RefereeCutOff:
    """How many of a referee's discussions and assessments in ``debate`` ended at their token
    cap, and whether its verdict's assessment did (None: no verdict, or one without
    assessment); how many of its assessments are empty, and whether its verdict's is."""
    mine = [u for u in debate.transcript.utterances if u.speaker == speaker]
    discussions = [u for u in mine if u.kind == "discussion"]
    assessments = [u for u in mine if u.kind == "assessment"]
    verdict = next((u for u in mine if u.kind == "verdict"), None)
    reasoning = next(
        (u for u in assessments if verdict is not None and u.turn.question() == verdict.turn.question()), None
    )
    return {
        "discussions": len(discussions),
        "discussions_cut": sum(u.finish_reason == "length" for u in discussions),
        "assessments": len(assessments),
        "assessments_cut": sum(u.finish_reason == "length" for u in assessments),
        "verdict_assessment_cut": None if reasoning is None else reasoning.finish_reason == "length",
        "assessments_empty": sum(_empty(u.text) for u in assessments),
        "verdict_assessment_empty": None if reasoning is None else _empty(reasoning.text),
    }


def summaries_cut_off(debates: Iterable[Debate]) -> SummariesCutOff:
    """How many of the summarizer's summaries in ``debates`` ended at their token cap."""
    summaries = [u for d in debates for u in d.transcript.utterances if u.kind == "summary"]
    return {"summaries": len(summaries), "summaries_cut": sum(u.finish_reason == "length" for u in summaries)}


def _share(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def cut_off_summary(
    referees: Sequence[RefereeCutOff], summaries: Sequence[SummariesCutOff]
) -> CutOffSummary | None:
    """Utterances cut off at their token cap per kind, over referee-debates (``referee_cut_off``
    records) and records' summaries (``summaries_cut_off``); None when neither was recorded
    (runs of earlier releases).

    Per kind (discussion, summary, assessment): ``utterances``, ``cut`` and ``share`` (None
    when there were none). ``verdicts_with_assessment``: verdicts that came after an
    assessment; ``verdicts_cut_off``: those whose assessment was cut off.
    """
    if not referees and not summaries:
        return None
    assessed = [c["verdict_assessment_cut"] for c in referees if c["verdict_assessment_cut"] is not None]
    return {
        "discussion": _kind([c["discussions"] for c in referees], [c["discussions_cut"] for c in referees]),
        "summary": _kind([c["summaries"] for c in summaries], [c["summaries_cut"] for c in summaries]),
        "assessment": _kind([c["assessments"] for c in referees], [c["assessments_cut"] for c in referees]),
        "verdicts_with_assessment": len(assessed),
        "verdicts_cut_off": sum(assessed),
    }


def _kind(utterances: Sequence[int], cut: Sequence[int]) -> CutOffKind:
    whole, part = sum(utterances), sum(cut)
    return {"utterances": whole, "cut": part, "share": _share(part, whole)}


def empty_summary(rows: Sequence[RefereeRow]) -> EmptyAssessments:
    """Empty assessments over verdict rows (a referee in a debate each): of all their
    assessments (``assessments``, ``empty``, ``share``; None with ``reason`` when a row's
    release did not count them), and of their verdicts' own assessments, read from the rows'
    ``assessment`` (``verdicts_with_assessment``, ``verdicts_empty``, ``verdicts_share``)."""
    counts = [row.get("cut_off") for row in rows]
    recorded = all(c is not None and "assessments_empty" in c for c in counts)
    assessments = sum(c["assessments"] for c in counts if c is not None) if recorded else None
    empty = sum(c.get("assessments_empty", 0) for c in counts if c is not None) if recorded else None
    given = [row["assessment"] for row in rows if "assessment" in row]
    verdicts_empty = sum(_empty(text) for text in given)
    return {
        "assessments": assessments,
        "empty": empty,
        "share": None if assessments is None or empty is None else _share(empty, assessments),
        "reason": None if recorded else NOT_RECORDED,
        "verdicts_with_assessment": len(given),
        "verdicts_empty": verdicts_empty,
        "verdicts_share": _share(verdicts_empty, len(given)),
    }
