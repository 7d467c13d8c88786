"""Writing a run folder: config.yaml, transcripts.jsonl, verdicts.jsonl, metrics.json, run.json.

Every file is written to a temporary name in the same folder and renamed into place, so a
reader never sees a half-written file.
"""

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chateval.errors import ConfigError

FINISHED_MARKER = "run.json"


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(path)


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` as indented JSON, atomically."""
    _atomic_write(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def write_jsonl(path: Path, records: Iterable[dict[str, Any]]) -> None:
    """Write one JSON object per line, atomically."""
    _atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def write_text(path: Path, text: str) -> None:
    """Write a text file, atomically."""
    _atomic_write(path, text)


def prepare_outdir(outdir: Path, force: bool) -> Path:
    """Create ``outdir``; refuse to overwrite a finished run unless ``force``."""
    if outdir.exists() and not outdir.is_dir():
        raise ConfigError(f"{outdir}: output path exists and is not a folder")
    if (outdir / FINISHED_MARKER).exists() and not force:
        raise ConfigError(f"{outdir} already holds a finished run; pass --force to overwrite it")
    outdir.mkdir(parents=True, exist_ok=True)
    return outdir
