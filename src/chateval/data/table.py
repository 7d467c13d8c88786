"""A user's own data in JSONL, JSON (a list of objects), CSV or parquet, mapped by the config.

``format: table_pairwise`` or ``table_direct``; ``fields`` names the source field of each item
field (pairwise: optionally ``system_a``, ``system_b`` and ``prompt`` too), ``labels`` maps label
values to A/B/tie, and (direct) ``scores`` maps dimension names to the fields holding human
scores. No code needed for a new data set. (``table_responses``, one row per system's response,
is in data/responses.py.)
"""

from typing import TYPE_CHECKING, Any

from chateval.core.items import DirectItem, Item, PairwiseItem
from chateval.data.fields import field_value, is_absent, label_problem
from chateval.data.files import Record, read_records
from chateval.data.jsonl import category, required_id, system_pair, text_field, unique_id
from chateval.errors import DataError
from chateval.schema.base import Label

if TYPE_CHECKING:
    from chateval.config.data import DataConfig


def mapped_scores(record: dict[str, Any], data: "DataConfig", where: str) -> dict[str, float]:
    """The human scores ``data.scores`` maps (dimension -> field), as numbers."""
    scores: dict[str, float] = {}
    for dimension, column in data.scores.items():
        raw: Any = field_value(record, column)  # whatever the file holds: float() decides
        try:
            scores[dimension] = float(raw)
        except (TypeError, ValueError):
            raise DataError(f"{where}: field {column!r} must be a number, got {raw!r}") from None
    return scores


def _mapped_text(record: dict[str, Any], key: str | None, where: str) -> str | None:
    """A mapped optional field (None when the field map leaves it unset); mapped, it is required."""
    return None if key is None else text_field(record, key, where)


def _mapped_id(record: dict[str, Any], key: str | None, where: str) -> str | None:
    return None if key is None else required_id(record, key, where)


def table_records(data: "DataConfig") -> list[Record]:
    """The records of ``data.path`` (at least one), each with its location."""
    records = read_records(data.file)
    if not records:
        raise DataError(f"{data.file}: no records")
    return records


def _id(record: dict[str, Any], where: str, seen: set[str], key: str | None, index: int) -> str:
    if key is None:
        return str(index)
    return unique_id(required_id(record, key, where), where, seen)


def load_table_pairwise(data: "DataConfig") -> list[Item]:
    """Pairwise items from a mapped table."""
    f = data.fields
    items: list[Item] = []
    seen: set[str] = set()
    for index, (where, record) in enumerate(table_records(data)):
        label: Label | None = None
        if f.label is not None:
            raw = field_value(record, f.label)
            if is_absent(raw) or str(raw) not in data.labels:
                allowed = ", ".join(sorted(data.labels)) or "(none: set data.labels)"
                raise DataError(f"{where}: {label_problem(record, f.label, raw, allowed)}")
            label = data.labels[str(raw)]
        system_a, system_b = system_pair(
            _mapped_text(record, f.system_a, where),
            _mapped_text(record, f.system_b, where),
            where,
            (f.system_a or "system_a", f.system_b or "system_b"),
        )
        items.append(
            PairwiseItem(
                id=_id(record, where, seen, f.id, index),
                question=text_field(record, f.question, where),
                answer_a=text_field(record, f.answer_a, where),
                answer_b=text_field(record, f.answer_b, where),
                label=label,
                system_a=system_a,
                system_b=system_b,
                prompt=_mapped_id(record, f.prompt, where),
                category=category(record, f.category, where),
            )
        )
    return items


def load_table_direct(data: "DataConfig") -> list[Item]:
    """Direct-scoring items from a mapped table."""
    f = data.fields
    items: list[Item] = []
    seen: set[str] = set()
    for index, (where, record) in enumerate(table_records(data)):
        scores = mapped_scores(record, data, where)
        items.append(
            DirectItem(
                id=_id(record, where, seen, f.id, index),
                context=text_field(record, f.context, where),
                response=text_field(record, f.response, where),
                knowledge=text_field(record, f.knowledge, where, required=False) if f.knowledge else "",
                scores=scores,
                category=category(record, f.category, where),
            )
        )
    return items
