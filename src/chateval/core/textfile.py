"""Text files: reading a user's file (UTF-8 or a clear error naming the file and line), and
writing ours atomically (a temporary name in the same folder, renamed into place, so a reader
never sees a half-written file) and private (core/file_access.py)."""

import gzip
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chateval.core.file_access import open_private
from chateval.errors import ChatEvalError, DataError


def read_utf8(path: Path, error: type[ChatEvalError] = DataError) -> str:
    """The file's text (a ``.gz`` file's, uncompressed); ``error`` names the file, line and
    byte when it is not UTF-8."""
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error(
            f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The non-blank lines of a JSONL file as (line number, object); DataError names the line."""
    if not path.is_file():
        raise DataError(f"{path}: data file not found")
    records: list[tuple[int, dict[str, Any]]] = []
    for number, line in enumerate(read_utf8(path).splitlines(), start=1):
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


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Write one JSON object per line, atomically."""
    write_text(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def write_text(path: Path, text: str) -> None:
    """Write a text file (UTF-8), atomically."""
    _atomic_write(path, text.encode("utf-8"))


def write_bytes(path: Path, data: bytes) -> None:
    """Write a binary file (a plot), atomically."""
    _atomic_write(path, data)
