"""Reading the run folder's files through their types: a JSON document (run.json, metrics.json,
roster.json) or a JSON-lines file (verdicts, transcripts, items) is parsed, migrated to today's
format where an earlier release wrote it (the documents), and validated by pydantic against its record type
(chateval.schema). A record that does not fit is a DataError naming the file, the line and
the field, never a KeyError deep in a report.
"""

import json
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar, cast, get_args, get_origin, get_type_hints

from pydantic import TypeAdapter, ValidationError
from typing_extensions import is_typeddict

from chateval.core.textfile import json_value, read_jsonl
from chateval.errors import DataError

T = TypeVar("T")
Migration = Callable[[dict[str, Any]], dict[str, Any]]
_SHOWN_ERRORS = 3  # a broken record may break many fields: the first few say enough


@cache
def _adapter(record_type: Any) -> TypeAdapter[Any]:
    # Building an adapter compiles the type's validator: once per type and process.
    return TypeAdapter(record_type)


@cache
def _type_names(record_type: Any) -> frozenset[str]:
    """The names of the record types reachable from ``record_type``: pydantic puts the member's
    name into an error's location when a union of them does not fit."""
    names: set[str] = set()
    pending = [record_type]
    while pending:
        current = pending.pop()
        pending += get_args(current)
        origin = get_origin(current) or current
        if is_typeddict(origin) and origin.__name__ not in names:
            names.add(origin.__name__)
            pending += get_type_hints(origin).values()
    return frozenset(names)


_SCALAR_BRANCHES = frozenset({"int", "float", "str", "bool", "none", "list", "dict"})


def _is_branch(part: int | str, record_type: Any) -> bool:
    """``part`` of an error's location names a union's member, not a key: a record type's name,
    a generic one's (``list[Distribution]``, ``Name[...]``) or a scalar's."""
    return isinstance(part, str) and (
        part in _type_names(record_type) or part in _SCALAR_BRANCHES or "[" in part
    )


def _field(loc: tuple[int | str, ...], record_type: Any, at: str) -> str:
    """A pydantic error location as the key path a reader finds in the file, from the record's
    own place there (``at``; list positions in brackets; the union members' names pydantic adds
    left out)."""
    out = at
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _is_branch(part, record_type):
            continue
        else:
            out += f".{part}" if out else part
    return out or "(the record)"


def _closest_branch(errors: list[Any], record_type: Any) -> list[Any]:
    """The errors of a union's member that came closest to fitting (fewest errors), per union:
    a record that fits neither member says what its own kind lacks, not both kinds' lists."""
    by_union: dict[tuple[Any, ...], dict[str, int]] = {}
    for error in errors:
        loc = error["loc"]
        for i, part in enumerate(loc):
            if _is_branch(part, record_type):
                counts = by_union.setdefault(tuple(loc[:i]), {})
                counts[part] = counts.get(part, 0) + 1
    best = {prefix: min(counts, key=lambda name: counts[name]) for prefix, counts in by_union.items()}

    def kept(error: Any) -> bool:
        loc = error["loc"]
        members = [(i, part) for i, part in enumerate(loc) if _is_branch(part, record_type)]
        return all(best.get(tuple(loc[:i]), part) == part for i, part in members)

    return [error for error in errors if kept(error)]


def _problem(where: str, exc: ValidationError, record_type: Any, at: str) -> DataError:
    errors = _closest_branch(exc.errors(include_url=False), record_type)
    shown = "; ".join(
        f"field {_field(e['loc'], record_type, at)}: {e['msg']}" for e in errors[:_SHOWN_ERRORS]
    )
    more = f" (and {len(errors) - _SHOWN_ERRORS} more)" if len(errors) > _SHOWN_ERRORS else ""
    return DataError(f"{where}: {shown}{more}")


def validated(record: Any, record_type: type[T], where: str, at: str = "") -> T:
    """``record`` (migrated to today's format first, where an earlier release wrote it), checked
    against ``record_type``: a DataError that names ``where`` (file:line) and the fields that do
    not fit (from ``at``, the record's place in its document). The record is returned as it was
    read, not as pydantic would convert it (an integer stays an integer where the type says
    float, a list a list where it says tuple), so what a reader computes or writes back is what
    the file holds; its type is what the check proved. The check is JSON's strict one: a number
    written as text is an error, not converted."""
    if not isinstance(record, Mapping):
        raise DataError(
            f"{where}: {at + ': ' if at else ''}expected a JSON object, got {type(record).__name__}"
        )
    try:
        _adapter(cast(Any, record_type)).validate_json(json.dumps(record), strict=True)
    except ValidationError as exc:
        raise _problem(where, exc, record_type, at) from None
    return cast(T, record)


def _read_json(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from None
    return json_value(text, str(path))


def read_json_object(path: Path) -> dict[str, Any]:
    """The JSON object at ``path`` as written, neither migrated nor validated (a copy of it
    keeps its release's format)."""
    raw = _read_json(path)
    if not isinstance(raw, dict):
        raise DataError(f"{path}: expected a JSON object, got {type(raw).__name__}")
    return raw


def read_document(path: Path, record_type: type[T], migrate: Migration | None = None) -> T:
    """The JSON document at ``path`` (migrated first, when ``migrate`` is given) as ``record_type``."""
    raw = _read_json(path)
    if isinstance(raw, dict) and migrate is not None:
        raw = migrate(raw)
    return validated(raw, record_type, str(path))


def read_lines(path: Path, record_type: type[T]) -> list[T]:
    """The records of the JSON-lines file at ``path`` (gzip-compressed when it ends in .gz), each
    validated as ``record_type`` (verdict, transcript and item records only ever gained keys:
    no migration)."""
    return [validated(raw, record_type, f"{path}:{number}") for number, raw in read_jsonl(path)]
