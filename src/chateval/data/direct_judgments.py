"""Another tool's direct scores, read for ``chateval import`` (``task: direct``): each record one
system's answer to one prompt with the judge's score (the fields mapped by the import config,
dotted paths allowed), as MT-Bench's single-answer grading gives them (FastChat's
``model_judgment/<judge>_single.jsonl``: ``question_id``, ``model``, ``judge``, ``score`` 1-10 or
-1, ``turn``). A score the config names as failed (-1) is kept as a judgment without a score.
Every bad record is a DataError naming the file, the record and the field.
"""

import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chateval.data.fields import field_value, is_absent, missing_text
from chateval.data.files import read_records
from chateval.data.jsonl import required_id, text_field
from chateval.data.record_filter import TurnAndJudge
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.direct_imports import DirectImportConfig


@dataclass(frozen=True)
class Score:
    """One answer as the file scored it; ``value`` None: the judge gave no score (a value the
    config names as failed, ``raw`` as the file has it)."""

    where: str  # file:line
    prompt: str
    system: str
    value: float | None
    raw: str


@dataclass(frozen=True)
class Scores:
    """What the scores file gave: the scores kept, the records read, and how many scores each
    failed value stood for."""

    kept: list[Score]
    records: int
    skipped: Mapping[str, int]


def _number(value: float) -> str:
    """A score as a reader writes it: 8, not 8.0."""
    return str(int(value)) if float(value).is_integer() else str(value)


def _score(record: dict[str, Any], config: "DirectImportConfig", where: str) -> tuple[float | None, str]:
    """The record's score and its text, None where the config names the value as failed; a
    DataError for a missing, non-numeric or off-scale score."""
    key, scale = config.scores.score, config.dimension
    raw = field_value(record, key)
    if is_absent(raw):
        raise DataError(f"{where}: {missing_text(key, raw)}")
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not math.isfinite(raw):
        raise DataError(f"{where}: field {key!r} must be a number, got {raw!r}")
    if raw in config.scores.failed:
        return None, _number(raw)
    if not scale.low <= raw <= scale.high:
        failed = (
            f" (failed values: {', '.join(map(_number, config.scores.failed))})"
            if config.scores.failed
            else ""
        )
        raise DataError(
            f"{where}: field {key!r} is {raw!r}, outside the scale {scale.low}..{scale.high} of "
            f"dimension {scale.name!r}{failed}"
        )
    return float(raw), _number(raw)


def read_scores(config: "DirectImportConfig") -> Scores:
    """The scores of the import's file, of its turn and judge (module doc); an answer scored
    twice, or records of several judges with none chosen, is refused."""
    files = config.scores
    records = read_records(files.path)
    kept: list[Score] = []
    first: dict[tuple[str, str], str] = {}
    wanted = TurnAndJudge(files.path, files.turn, config.kept_turn, files.judge, config.judge)
    skipped: Counter[str] = Counter()
    for where, record in records:
        if not wanted.keeps(record, where):
            continue
        prompt = required_id(record, files.prompt, where)
        system = text_field(record, files.system, where)
        if (prompt, system) in first:
            raise DataError(
                f"{where}: prompt {prompt!r}, system {system!r} is scored again (first at "
                f"{first[prompt, system]}); an import takes one score per answer (keep one turn or judge)"
            )
        first[prompt, system] = where
        value, raw = _score(record, config, where)
        if value is None:
            skipped[raw] += 1
        kept.append(Score(where, prompt, system, value, raw))
    wanted.check(len(kept))
    return Scores(kept, len(records), dict(skipped))
