"""The input files a run reads (data, questions, labels), each hashed when the run starts
(chateval.record.inputs: a report says so when one has changed since)."""

import glob
from pathlib import Path

from chateval.config.data import DataConfig
from chateval.record.inputs import file_hash

_GLOB_CHARACTERS = frozenset("*?[")


def _files(path: Path) -> list[Path]:
    """The files ``path`` names: itself, the files under a folder, or a glob pattern's matches."""
    if _GLOB_CHARACTERS & set(str(path)):
        return sorted(Path(p) for p in glob.glob(str(path), recursive=True) if Path(p).is_file())
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file())
    return [path] if path.is_file() else []


def input_files(data: DataConfig) -> list[Path]:
    """Every file the data section reads, in a stable order."""
    named = list(data.path.values()) if isinstance(data.path, dict) else [data.path]
    named += [extra.path for extra in (data.questions, data.labels_file) if extra is not None]
    return list(dict.fromkeys(f for path in named for f in _files(path)))


def input_hashes(data: DataConfig) -> dict[str, str]:
    """Each input file by its path -> its content hash."""
    return {str(path): file_hash(path) for path in input_files(data)}
