"""chateval's own JSONL format, one record per line.

Pairwise: ``{"id", "question", "answer_a", "answer_b", "label"?, "system_a"?, "system_b"?,
"prompt"?}`` with label A, B or tie; the systems (both or neither) name who wrote each answer,
``prompt`` (a string or integer) the prompt the comparison belongs to.
Direct: ``{"id", "context", "response", "knowledge"?, "scores"?}`` with scores a mapping of
dimension name to number.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from chateval.core.items import LABELS, DirectItem, Item, PairwiseItem
from chateval.core.textfile import json_value, read_jsonl, read_utf8
from chateval.data.fields import field_value, is_absent, missing_text
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.data import DataConfig


def read_json_list(path: Path) -> list[Any]:
    """A JSON file holding a list; DataError names the file and the problem."""
    try:
        text = read_utf8(path)
    except FileNotFoundError:
        raise DataError(f"{path}: data file not found") from None
    records = json_value(text, str(path))
    if not isinstance(records, list):
        raise DataError(f"{path}: expected a JSON list of items")
    return records


def numeric_scores(record: dict[str, Any], where: str) -> dict[str, float]:
    """The optional ``scores`` mapping of dimension name to number."""
    scores = record.get("scores", {})
    if not isinstance(scores, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values()
    ):
        raise DataError(f"{where}: field 'scores' must map dimension names to numbers")
    return {str(k): float(v) for k, v in scores.items()}


def text_field(record: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    """The string field ``key`` (plain or dotted, data/fields.py); DataError names ``where`` and
    the field when it is bad."""
    value = field_value(record, key)
    if is_absent(value):
        if required:
            raise DataError(f"{where}: {missing_text(key, value)}")
        return ""
    if not isinstance(value, str):
        raise DataError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise DataError(f"{where}: field {key!r} is empty")
    return value


def optional_text(record: dict[str, Any], key: str, where: str) -> str | None:
    """The optional string field ``key`` (None when absent or null); present, it must not be empty."""
    if is_absent(field_value(record, key)):
        return None
    return text_field(record, key, where)


def optional_id(record: dict[str, Any], key: str, where: str) -> str | None:
    """The optional id field ``key`` (a string or integer) as a string; None when absent or null."""
    raw = field_value(record, key)
    if is_absent(raw):
        return None
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise DataError(f"{where}: field {key!r} must be a string or integer, got {type(raw).__name__}")
    if not str(raw).strip():
        raise DataError(f"{where}: field {key!r} is empty")
    return str(raw)


def turn_texts(record: dict[str, Any], key: str, where: str, turn: int) -> list[str]:
    """The texts of a conversation's turns at field ``key`` (``data.turn``): a list of strings,
    or of message records with a ``content`` string (Arena-Hard's turns), at least ``turn``
    long; the first ``turn`` are returned."""
    value = field_value(record, key)
    if is_absent(value):
        raise DataError(f"{where}: {missing_text(key, value)}")
    if not isinstance(value, list):
        raise DataError(
            f"{where}: field {key!r} must list the conversation's turns (data.turn), "
            f"got {type(value).__name__}"
        )
    if len(value) < turn:
        raise DataError(f"{where}: field {key!r} has {len(value)} turns; data.turn {turn} needs {turn}")
    texts = []
    for number, entry in enumerate(value[:turn], 1):
        text = entry.get("content") if isinstance(entry, dict) else entry
        if not isinstance(text, str) or not text.strip():
            raise DataError(
                f"{where}: field {key!r}, turn {number}: expected a non-empty string (or a record "
                f"with one at 'content'), got {text!r:.60}"
            )
        texts.append(text)
    return texts


def category(record: dict[str, Any], key: str | None, where: str) -> str | None:
    """The record's category from field ``key`` (``fields.category``; None when unset). Set, every
    record must have one: a string or integer, not empty."""
    if key is None:
        return None
    value = field_value(record, key)
    named = f"field {key!r} (fields.category)"
    if is_absent(value):
        fields = ", ".join(map(str, list(record)[:12])) or "none"
        raise DataError(
            f"{where}: {missing_text(key, value)} (fields.category); the record's fields: {fields}"
        )
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise DataError(f"{where}: {named} must be a string or integer, got {type(value).__name__}")
    if not str(value).strip():
        raise DataError(f"{where}: {named} is empty")
    return str(value).strip()


def required_id(record: dict[str, Any], key: str, where: str) -> str:
    """The id field ``key`` (a string or integer) as a string; DataError when it is absent."""
    value = optional_id(record, key, where)
    if value is None:
        raise DataError(f"{where}: {missing_text(key, field_value(record, key))}")
    return value


def system_pair(
    system_a: str | None, system_b: str | None, where: str, keys: tuple[str, str] = ("system_a", "system_b")
) -> tuple[str | None, str | None]:
    """Both systems of a comparison, or neither; two different ones."""
    if (system_a is None) != (system_b is None):
        missing = keys[1] if system_b is None else keys[0]
        raise DataError(f"{where}: field {missing!r} is missing; give both systems or neither")
    if system_a is not None and system_a == system_b:
        raise DataError(f"{where}: fields {keys[0]!r} and {keys[1]!r} name the same system {system_a!r}")
    return system_a, system_b


def item_id(record: dict[str, Any], where: str, seen: set[str], key: str = "id") -> str:
    """The record's id as a string, unique within ``seen``."""
    raw = record.get(key)
    if raw is None or isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise DataError(f"{where}: field {key!r} must be a string or integer")
    return unique_id(str(raw), where, seen)


def unique_id(value: str, where: str, seen: set[str]) -> str:
    """``value``, recorded in ``seen``; DataError when an earlier record had it."""
    if value in seen:
        raise DataError(f"{where}: duplicate id {value!r}")
    seen.add(value)
    return value


def load_pairwise(data: "DataConfig") -> list[Item]:
    """Load pairwise items from chateval JSONL."""
    path = data.file
    items: list[Item] = []
    seen: set[str] = set()
    for number, record in read_jsonl(path):
        where = f"{path}:{number}"
        label = record.get("label")
        if label is not None and label not in LABELS:
            raise DataError(f"{where}: field 'label' is {label!r}; allowed: A, B, tie")
        system_a, system_b = system_pair(
            optional_text(record, "system_a", where), optional_text(record, "system_b", where), where
        )
        items.append(
            PairwiseItem(
                id=item_id(record, where, seen),
                question=text_field(record, "question", where),
                answer_a=text_field(record, "answer_a", where),
                answer_b=text_field(record, "answer_b", where),
                label=label,
                system_a=system_a,
                system_b=system_b,
                prompt=optional_id(record, "prompt", where),
                category=category(record, data.fields.category, where),
            )
        )
    return items


def load_direct(data: "DataConfig") -> list[Item]:
    """Load direct-scoring items from chateval JSONL."""
    path = data.file
    items: list[Item] = []
    seen: set[str] = set()
    for number, record in read_jsonl(path):
        where = f"{path}:{number}"
        items.append(
            DirectItem(
                id=item_id(record, where, seen),
                context=text_field(record, "context", where),
                response=text_field(record, "response", where),
                knowledge=text_field(record, "knowledge", where, required=False),
                scores=numeric_scores(record, where),
                group=text_field(record, "group", where, required=False) or None,
                category=category(record, data.fields.category, where),
            )
        )
    return items
