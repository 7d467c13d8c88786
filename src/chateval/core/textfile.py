"""Reading a user's text file: UTF-8 or a clear error naming the file and line."""

from pathlib import Path

from chateval.errors import ChatEvalError, DataError


def read_utf8(path: Path, error: type[ChatEvalError] = DataError) -> str:
    """The file's text; ``error`` names the file, line and byte when it is not UTF-8."""
    raw = path.read_bytes()
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise error(
            f"{path}:{line}: not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None
