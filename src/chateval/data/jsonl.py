"""chateval's own JSONL format, one record per line.

Pairwise: ``{"id", "question", "answer_a", "answer_b", "label"?}`` with label A, B or tie.
Direct: ``{"id", "context", "response", "knowledge"?, "scores"?}`` with scores a mapping of
dimension name to number.
"""

import json
from pathlib import Path
from typing import Any

from chateval.data.items import LABELS, DirectItem, Item, PairwiseItem
from chateval.data.loaders import LOADERS
from chateval.errors import DataError


def _read_records(path: Path) -> list[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise DataError(f"{path}: data file not found")
    records: list[tuple[int, dict[str, Any]]] = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{number}: invalid JSON ({exc.msg})") from None
            if not isinstance(record, dict):
                raise DataError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
            records.append((number, record))
    if not records:
        raise DataError(f"{path}: no records")
    return records


def _text(record: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = record.get(key)
    if value is None:
        if required:
            raise DataError(f"{where}: missing field {key!r}")
        return ""
    if not isinstance(value, str):
        raise DataError(f"{where}: field {key!r} must be a string, got {type(value).__name__}")
    if required and not value.strip():
        raise DataError(f"{where}: field {key!r} is empty")
    return value


def _item_id(record: dict[str, Any], where: str, seen: set[str]) -> str:
    raw = record.get("id")
    if raw is None or isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise DataError(f"{where}: field 'id' must be a string or integer")
    item_id = str(raw)
    if item_id in seen:
        raise DataError(f"{where}: duplicate id {item_id!r}")
    seen.add(item_id)
    return item_id


@LOADERS.register("jsonl_pairwise")
def load_pairwise(path: Path) -> list[Item]:
    """Load pairwise items from chateval JSONL."""
    items: list[Item] = []
    seen: set[str] = set()
    for number, record in _read_records(path):
        where = f"{path}:{number}"
        label = record.get("label")
        if label is not None and label not in LABELS:
            raise DataError(f"{where}: field 'label' is {label!r}; allowed: A, B, tie")
        items.append(
            PairwiseItem(
                id=_item_id(record, where, seen),
                question=_text(record, "question", where),
                answer_a=_text(record, "answer_a", where),
                answer_b=_text(record, "answer_b", where),
                label=label,
            )
        )
    return items


@LOADERS.register("jsonl_direct")
def load_direct(path: Path) -> list[Item]:
    """Load direct-scoring items from chateval JSONL."""
    items: list[Item] = []
    seen: set[str] = set()
    for number, record in _read_records(path):
        where = f"{path}:{number}"
        scores = record.get("scores", {})
        if not isinstance(scores, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in scores.values()
        ):
            raise DataError(f"{where}: field 'scores' must map dimension names to numbers")
        items.append(
            DirectItem(
                id=_item_id(record, where, seen),
                context=_text(record, "context", where),
                response=_text(record, "response", where),
                knowledge=_text(record, "knowledge", where, required=False),
                scores={str(k): float(v) for k, v in scores.items()},
            )
        )
    return items
