"""Reading a named field of a record, where the name may be a dotted path into nested records.

``choices.0.turns.0`` reads ``record["choices"][0]["turns"][0]`` (MT-Bench's and Arena-Hard's
answer files nest the answer so). A key that exists as written wins over a dotted reading, so
a flat column named ``a.b`` still reads as itself.
"""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Missing:
    """A field that is not there; ``why`` says where a dotted path stopped ("" when the key
    itself is absent)."""

    why: str = ""


def field_value(record: dict[str, Any], key: str) -> Any:
    """The value at ``key`` (a plain or dotted name), or ``Missing`` saying where it stopped."""
    if key in record:
        return record[key]
    if "." not in key:
        return Missing()
    value: Any = record
    walked: list[str] = []
    for step in key.split("."):
        place = ".".join(walked) or "the record"
        if isinstance(value, dict):
            if step not in value:
                keys = ", ".join(map(str, list(value)[:8])) or "none"
                return Missing(f"{place} has no key {step!r} (keys: {keys})")
            value = value[step]
        elif isinstance(value, list):
            if not step.isdigit():
                return Missing(f"{place} is a list: {step!r} is not a position")
            if int(step) >= len(value):
                return Missing(f"{place} has {len(value)} entries, no position {step}")
            value = value[int(step)]
        else:
            return Missing(f"{place} is a {type(value).__name__}, not a record or list")
        walked.append(step)
    return value


def is_absent(value: Any) -> bool:
    """Whether a ``field_value`` result stands for no value (missing or null)."""
    return value is None or isinstance(value, Missing)


def missing_text(key: str, value: Any) -> str:
    """``missing field 'k'`` with the reason a dotted path stopped, for an error message."""
    reason = value.why if isinstance(value, Missing) and value.why else ""
    return f"missing field {key!r}" + (f" ({reason})" if reason else "")


def label_problem(record: dict[str, Any], key: str, value: Any, allowed: str) -> str:
    """Why a label field's ``value`` (a ``field_value``) is refused: the field is not in the
    record (named with the fields it has), or holds a value outside the mapped ones."""
    if isinstance(value, Missing):
        fields = ", ".join(map(str, list(record)[:12])) or "none"
        return f"{missing_text(key, value)}; the record's fields: {fields}"
    return f"field {key!r} is {value!r}; mapped values: {allowed}"
