"""Data files as people keep them: records from JSONL, JSON arrays, CSV, parquet and Hugging
Face datasets saved to disk (offline: read with pyarrow, no ``datasets`` import), and the
files a responses config's ``path`` names (one file, a folder, a glob, a mapping system ->
file), each with the system it holds when the path says so.
"""

import csv
import glob
import importlib
import io
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chateval.core.textfile import json_value, read_jsonl, read_utf8
from chateval.errors import DataError

if TYPE_CHECKING:
    from chateval.config.data import DataConfig

SUFFIXES = (".jsonl", ".json", ".csv", ".parquet")
Record = tuple[str, dict[str, Any]]
"""A record with its location for error messages (``file:line`` or ``file: row N``)."""


def read_records(path: Path) -> list[Record]:
    """Every record of a data file, or of a dataset folder saved by ``datasets.save_to_disk``."""
    if path.is_dir():
        if (path / "state.json").is_file():
            return _saved_dataset(path)
        if (path / "dataset_dict.json").is_file():
            raise DataError(
                f"{path}: a DatasetDict saved to disk; point at one split's folder (e.g. {path / 'train'})"
            )
        raise DataError(f"{path}: a folder, not a data file")
    if not path.is_file():
        raise DataError(f"{path}: data file not found")
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return [(f"{path}:{n}", r) for n, r in read_jsonl(path)]
    if suffix == ".json":
        return _json_list(path)
    if suffix == ".csv":
        try:
            rows = list(csv.DictReader(io.StringIO(read_utf8(path), newline="")))
        except csv.Error as exc:
            raise DataError(f"{path}: invalid CSV ({exc})") from None
        # Line numbers count the header as line 1.
        return [(f"{path}:{i + 2}", dict(r)) for i, r in enumerate(rows)]
    if suffix == ".parquet":
        parquet = _pyarrow(path, "parquet")
        try:
            rows = parquet.read_table(path).to_pylist()
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise DataError(f"{path}: unreadable parquet ({exc})") from None
        return [(f"{path}: row {i}", r) for i, r in enumerate(rows)]
    raise DataError(f"{path}: unsupported file type {suffix!r}; use {', '.join(SUFFIXES)}")


def _json_list(path: Path) -> list[Record]:
    records = json_value(read_utf8(path), str(path))
    if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
        raise DataError(f"{path}: expected a JSON list of objects")
    return [(f"{path}: item {i}", r) for i, r in enumerate(records)]


def _pyarrow(path: Path, module: str) -> Any:
    """``pyarrow.<module>`` (parquet, ipc), or a DataError naming the file that needs it."""
    try:
        return importlib.import_module(f"pyarrow.{module}")
    except ImportError:
        raise DataError(f"{path}: reading it needs pyarrow (pip install pyarrow)") from None


def _saved_dataset(folder: Path) -> list[Record]:
    """A ``Dataset.save_to_disk`` folder: state.json lists its Arrow stream files."""
    try:
        state = json.loads(read_utf8(folder / "state.json"))
        names = [entry["filename"] for entry in state["_data_files"]]
    except (json.JSONDecodeError, KeyError, TypeError):
        raise DataError(f"{folder / 'state.json'}: not a datasets state file (no _data_files)") from None
    ipc = _pyarrow(folder, "ipc")
    records: list[Record] = []
    for name in names:
        try:
            with ipc.open_stream(str(folder / name)) as reader:
                rows = reader.read_all().to_pylist()
        except Exception as exc:  # pyarrow raises several types for a bad file
            raise DataError(f"{folder / name}: unreadable Arrow file ({exc})") from None
        records += [(f"{folder / name}: row {len(records) + i}", r) for i, r in enumerate(rows)]
    return records


@dataclass(frozen=True)
class DataFile:
    """One file of responses data, and the system it holds when the path names it (None: the
    records name their systems in a field)."""

    path: Path
    system: str | None


def response_files(data: "DataConfig") -> list[DataFile]:
    """The files ``data.path`` names, each with its system by ``data.system_from``; errors
    name the path and the file."""
    if isinstance(data.path, dict):
        return _mapped(data.path)
    paths = expand_path(data.path)
    how = data.system_from or "field"
    if how == "field":
        return [DataFile(p, None) for p in paths]
    named = [DataFile(p, p.stem if how == "file" else p.parent.name) for p in paths]
    _distinct(named, f"system_from: {how}")
    return named


def _mapped(mapping: dict[str, Path]) -> list[DataFile]:
    files = [DataFile(path, system) for system, path in mapping.items()]
    seen: dict[Path, str] = {}
    for file in files:
        if file.path in seen:
            raise DataError(
                f"data.path: {file.path} is mapped to both {seen[file.path]!r} and {file.system!r}"
            )
        seen[file.path] = str(file.system)
        if not (file.path.is_file() or file.path.is_dir()):
            raise DataError(f"data.path.{file.system}: {file.path}: data file not found")
    return files


def _distinct(files: list[DataFile], how: str) -> None:
    """Two files that would name the same system are refused: their rows would merge."""
    first: dict[str, Path] = {}
    for file in files:
        name = str(file.system)
        if name in first:
            raise DataError(
                f"{how}: system {name!r} is named by both {first[name]} and {file.path}; "
                + ("use system_from: folder" if how.endswith("file") else "use a mapping system -> file")
            )
        first[name] = file.path


def _pattern_for(path: Path, files: list[Path], stray: list[Path]) -> str:
    """A glob that names the data the folder ``path`` holds and leaves the rest out: the data
    file every subfolder holds when such subfolders outnumber the top-level data files
    (AlpacaEval's layout: one folder per system, a leaderboard beside them); else the
    top-level files' suffix (the most common one, as written)."""
    folders = [entry for entry in stray if entry.is_dir()]
    if len(folders) > len(files):
        shared = set.intersection(
            *({p.name for p in folder.iterdir() if p.suffix.lower() in SUFFIXES} for folder in folders)
        )
        if shared:
            return str(path / "*" / sorted(shared)[0])
    suffixes = Counter(f.suffix for f in files if f.is_file())
    return str(path / f"*{suffixes.most_common(1)[0][0] if suffixes else '.jsonl'}")


def expand_path(path: Path) -> list[Path]:
    """The data files ``path`` names: a file as itself; a glob's matches (sorted); a folder's
    data files (anything else in it is refused, naming a glob that would leave it out)."""
    if any(char in str(path) for char in "*?["):
        matches = sorted(Path(p) for p in glob.glob(str(path)))
        if not matches:
            raise DataError(f"{path}: no file matches this pattern")
        return matches
    if not path.is_dir() or any((path / name).is_file() for name in ("state.json", "dataset_dict.json")):
        return [path]  # a file, or a saved dataset (read_records reads or refuses it)
    files, stray = [], []
    for entry in sorted(path.iterdir()):
        if entry.name.startswith("."):
            continue
        if (entry.is_file() and entry.suffix.lower() in SUFFIXES) or (entry / "state.json").is_file():
            files.append(entry)
        else:
            stray.append(entry)
    if stray:
        raise DataError(
            f"{path}: {stray[0].name!r} is not a data file ({', '.join(SUFFIXES)} or a saved "
            "dataset); a data folder holds data files only: move it, or name the files with a "
            f"glob (here: {_pattern_for(path, files, stray)})"
        )
    if not files:
        raise DataError(f"{path}: no data files in this folder ({', '.join(SUFFIXES)})")
    return files
