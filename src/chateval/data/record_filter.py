"""Which records of another tool's judgments ``chateval import`` keeps (pairwise verdicts,
chateval.data.judgments; direct scores, chateval.data.direct_judgments): those of one
conversation turn and of one judge, where the import config names the fields that say them.
Records of several judges with none chosen are refused, and so is a file that keeps none.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chateval.data.fields import field_value, is_absent, missing_text
from chateval.data.jsonl import text_field
from chateval.errors import DataError


def turn_number(record: dict[str, Any], key: str, where: str) -> int:
    """The record's turn (an integer, or digits as text); a DataError naming the field."""
    raw = field_value(record, key)
    if is_absent(raw):
        raise DataError(f"{where}: {missing_text(key, raw)}")
    digits = isinstance(raw, str) and raw.strip().isdigit()
    if isinstance(raw, bool) or not (isinstance(raw, int) or digits):
        raise DataError(f"{where}: field {key!r} must be a turn number, got {raw!r}")
    return int(raw)


@dataclass
class TurnAndJudge:
    """The records of turn ``turn`` (where ``turn_field`` names each record's) and of judge
    ``judge`` (where ``judge_field`` names each record's; None: any judge) in the file ``path``;
    it notes each judge the records kept name."""

    path: Path
    turn_field: str | None
    turn: int
    judge_field: str | None
    judge: str | None
    judges: dict[str, str] = field(default_factory=dict)  # judge -> its first record kept

    def keeps(self, record: dict[str, Any], where: str) -> bool:
        """Whether ``record`` is of the turn and judge kept; a DataError for a bad field."""
        if self.turn_field is not None and turn_number(record, self.turn_field, where) != self.turn:
            return False
        if self.judge_field is not None:
            judge = text_field(record, self.judge_field, where)
            if self.judge is not None and judge != self.judge:
                return False
            self.judges.setdefault(judge, where)
        return True

    def check(self, kept: int) -> None:
        """A DataError when the ``kept`` records name several judges (keep one with `judge`),
        or when none was kept."""
        if len(self.judges) > 1:
            named = ", ".join(f"{judge!r} ({where})" for judge, where in self.judges.items())
            raise DataError(
                f"{self.path}: field {self.judge_field!r} names several judges ({named}); "
                "keep one with `judge`"
            )
        if not kept:
            what = f"turn {self.turn}" if self.turn_field is not None else "any turn"
            judge = f" of judge {self.judge!r}" if self.judge is not None else ""
            raise DataError(f"{self.path}: no record of {what}{judge}")
