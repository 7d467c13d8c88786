"""One verdict of another tool's record, read for ``chateval import``: its value mapped onto
A, B, tie or skip (``judgments.values``), or a number on a scale (``judgments.scale``: the
nearer end's answer wins, the midpoint is a tie, and the position is kept as the verdict's soft
value), with the weight its source counts it with (``judgments.weights``). A null or NaN value,
or one under a null, is skipped or refused (``judgments.no_verdict``). Every bad value is a
DataError naming the file, the record and the field.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from chateval.data.fields import Missing, field_value, label_problem, missing_text
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.imports import JudgmentsFile, VerdictValue

NO_VERDICT = "null"  # the raw text of a verdict the record holds as null or NaN


@dataclass(frozen=True)
class Verdict:
    """A verdict in one answer order, in A/B terms; ``label`` None: the judge gave none (a
    value the config maps to skip, or a null one skipped), ``raw`` the value as the file has
    it. ``weight``: how many times its source counts it (Arena-Hard's strong verdicts), None
    when the import gives no weights; ``share_a``: read on a scale, the share of the win its
    position gives A (1 at A's end, 0.5 at the midpoint), else None."""

    label: Label | None
    raw: str
    weight: float | None = None
    share_a: float | None = None


def _is_number(raw: Any) -> bool:
    return isinstance(raw, (int, float)) and not isinstance(raw, bool)


def _number(raw: Any) -> float | None:
    """``raw`` as a number: a number, or text that reads as one (a CSV cell); else None."""
    if _is_number(raw):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw)
        except ValueError:
            return None
    return None


def mapped_key(values: Mapping[str, Any], raw: Any) -> str | None:
    """The key of ``values`` that names ``raw``: its text, or for a number the key of the same
    number (``1`` names 1.0: YAML and JSON spell numbers their own ways); None when none does."""
    text = str(raw)
    if text in values:
        return text
    number = _number(raw) if _is_number(raw) else None
    if number is None:
        return None
    return next((key for key in values if _number(key) == number), None)


def _is_null(record: dict[str, Any], key: str, raw: Any) -> bool:
    """Whether the field holds null or NaN, or its dotted path runs into a null on the way (a
    game or judgment the tool did not record); a key that is absent is not null."""
    if raw is None or (isinstance(raw, float) and math.isnan(raw)):
        return True
    if not isinstance(raw, Missing):
        return False
    steps = key.split(".")
    return any(field_value(record, ".".join(steps[:n])) is None for n in range(1, len(steps)))


def _null_text(raw: Any) -> str:
    return "null" if raw is None else "NaN"


def _on_scale(number: float, scale: tuple[float, float]) -> tuple[Label, float] | None:
    """The verdict and A's share of the win of ``number`` on ``scale`` ([A's end, B's end]);
    None when it lies off the scale. The midpoint is a tie: ``2x`` against the ends' sum keeps
    it exact (AlpacaEval's 1.5)."""
    a_end, b_end = scale
    if not min(a_end, b_end) <= number <= max(a_end, b_end):
        return None
    share_a = (b_end - number) / (b_end - a_end)
    toward_b = (2 * number - (a_end + b_end)) * (b_end - a_end)
    label: Label = "B" if toward_b > 0 else "A" if toward_b < 0 else "tie"
    return label, share_a


def read_verdict(
    record: dict[str, Any], key: str, values: Mapping[str, "VerdictValue"], files: "JudgmentsFile", where: str
) -> Verdict:
    """The verdict in field ``key`` of ``record``, read by ``values`` and ``files``' scale,
    weights and rule for null values (module doc)."""
    raw = field_value(record, key)
    if _is_null(record, key, raw):
        if files.no_verdict == "skip":
            return Verdict(None, NO_VERDICT)
        what = missing_text(key, raw) if isinstance(raw, Missing) else f"field {key!r} is {_null_text(raw)}"
        raise DataError(
            f"{where}: {what}; judgments.no_verdict: skip counts it as a verdict the judge did not give"
        )
    named = None if isinstance(raw, Missing) else mapped_key(values, raw)
    if named is not None:
        mapped = values[named]
        if mapped == "skip":
            return Verdict(None, named)
        return Verdict(mapped, named, _weight(files, named))
    number = None if isinstance(raw, Missing) or files.scale is None else _number(raw)
    read = None if number is None or files.scale is None else _on_scale(number, files.scale)
    if read is None:
        raise DataError(f"{where}: {label_problem(record, key, raw, _allowed(values, files))}")
    label, share_a = read
    return Verdict(label, str(raw), _weight(files, None), share_a)


def _weight(files: "JudgmentsFile", value: str | None) -> float | None:
    """The weight of verdict ``value`` (None: read on the scale); None without weights."""
    if not files.weights:
        return None
    key = None if value is None else mapped_key(files.weights, value)
    return 1.0 if key is None else files.weights[key]


def _allowed(values: Mapping[str, Any], files: "JudgmentsFile") -> str:
    """The values a verdict may take, for an error message."""
    mapped = ", ".join(sorted(values))
    if files.scale is None:
        return mapped
    a_end, b_end = files.scale
    on_scale = f"a number from {a_end:g} (A) to {b_end:g} (B)"
    return f"{on_scale}, or {mapped}" if mapped else on_scale
