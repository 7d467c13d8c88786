"""Text files: reading a user's file (UTF-8 or a clear error naming the file and line), and
writing ours atomically (a temporary name in the same folder, renamed into place, so a reader
never sees a half-written file) and private (core/file_access.py). A write that fails (a
read-only place, no permission, a full disk) leaves no temporary file behind and is an
OutputError naming the file and the reason: every file chateval writes goes through here."""

import contextlib
import gzip
import json
import os
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from chateval.core.file_access import open_private
from chateval.errors import ChatEvalError, DataError, OutputError


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


# Half of a UTF-16 surrogate pair: JSON can escape one alone (\ud800), no UTF-8 file can hold it.
_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def json_value(text: str, where: str, *, one_line: bool = False) -> Any:
    """``text`` parsed as JSON. DataError names ``where`` and json's whole message with the
    place (``Unterminated string starting at: line 3 column 12``; ``one_line``: one record of
    a JSONL file, whose line ``where`` names, so only the column), or the field of a string
    holding half a surrogate pair: not a character, so no record of it could be written back."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        place = f"column {exc.colno}" if one_line else f"line {exc.lineno} column {exc.colno}"
        raise DataError(f"{where}: invalid JSON ({exc.msg}: {place})") from None
    if _SURROGATE_ESCAPE.search(text) and (field := _surrogate_field(value)) is not None:
        name, char = field
        raise DataError(
            f"{where}: {f'field {name!r}' if name else 'the value'} holds \\u{ord(char):04x} alone, half "
            "of a surrogate pair and not a character; correct the escape"
        )
    return value


def _surrogate_field(value: Any, at: str = "") -> tuple[str, str] | None:
    """The place (``answer_a``, ``[3].turns[0]``) of the first surrogate half in ``value``'s
    strings or keys, and the half."""
    if isinstance(value, str):
        half = _SURROGATE.search(value)
        return None if half is None else (at, half.group())
    inner: list[tuple[str, tuple[Any, ...]]]
    if isinstance(value, dict):
        inner = [(f"{at}.{key}" if at else str(key), (key, item)) for key, item in value.items()]
    elif isinstance(value, list):
        inner = [(f"{at}[{index}]", (item,)) for index, item in enumerate(value)]
    else:
        return None
    for place, parts in inner:
        for part in parts:
            if (found := _surrogate_field(part, place)) is not None:
                return found
    return None


def read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    """The non-blank lines of a JSONL file as (line number, object); DataError names the line."""
    if not path.is_file():
        raise DataError(f"{path}: data file not found")
    records: list[tuple[int, dict[str, Any]]] = []
    # Lines end at "\n" only: str.splitlines() would also cut a record at a U+2028 or a \x1c
    # inside one of its strings, which JSON allows raw (and json.dumps writes raw).
    for number, line in enumerate(read_utf8(path).split("\n"), start=1):
        if not line.strip():
            continue
        record = json_value(line, f"{path}:{number}", one_line=True)
        if not isinstance(record, dict):
            raise DataError(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        records.append((number, record))
    if not records:
        raise DataError(f"{path}: no records")
    return records


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        fd = open_private(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        tmp.replace(path)
    except BaseException as exc:  # Ctrl-C included: no temporary file is left half-written
        # Suppressed: on a read-only file system even removing a file that is not there fails.
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
        raise


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
