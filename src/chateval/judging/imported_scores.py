"""The verdict record of an answer another tool scored (``chateval import``, ``task: direct``), in
the shape a direct debate's has (chateval.judging.aggregate.aggregate_direct), so that every
statistic, report and export reads it as any run's.

The imported judge is one referee with one score, on the import's one dimension; the panel's
score is that score. A score the judge did not give (a value the config names as failed,
MT-Bench's -1) is a failed verdict with the value as its raw text: the record has no scores,
and the systems' means leave it out, as FastChat's show_result does.
"""

from chateval.core.items import DirectItem
from chateval.data.direct_judgments import Score
from chateval.schema.verdicts import RefereeRow, VerdictRecord


def imported_score_record(
    score: Score, item: DirectItem, referee: str, dimension: str, texts: bool
) -> VerdictRecord:
    """The verdict record of ``item`` as ``score`` scored it, by the one ``referee`` on
    ``dimension`` (module doc); ``texts``: the item carries its response (its length in words
    is recorded, the length baseline's prediction)."""
    row: RefereeRow
    if score.value is None:
        row = {
            "agent": referee,
            "error": f"no score: value {score.raw} is a failed judgment",
            "raw": score.raw,
        }
    else:
        row = {"agent": referee, "scores": {dimension: score.value}}
    record: VerdictRecord = {
        "item_id": item.id,
        "referees": [row],
        "scores": None if score.value is None else {dimension: score.value},
        "parse_failures": 1 if score.value is None else 0,
        "human_scores": dict(item.scores) or None,
        "group": score.prompt,
        "prompt": score.prompt,
        "system": score.system,
    }
    if texts:
        record["response_words"] = len(item.response.split())
    if item.category is not None:
        record["category"] = item.category
    return record
