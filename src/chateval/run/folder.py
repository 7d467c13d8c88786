"""Writing a run folder: config.yaml, transcripts.jsonl, verdicts.jsonl, metrics.json, run.json.

Every file is written to a temporary name in the same folder and renamed into place, so a
reader never sees a half-written file.
"""

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from chateval.core.engine_log import ENGINE_LOG
from chateval.errors import ChatEvalError, ConfigError

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


def write_jsonl(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """Write one JSON object per line, atomically."""
    _atomic_write(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def write_text(path: Path, text: str) -> None:
    """Write a text file, atomically."""
    _atomic_write(path, text)


RUN_FILES = (
    "config.yaml",
    "journal.jsonl",
    "transcripts.jsonl",
    "verdicts.jsonl",
    "metrics.json",
    ENGINE_LOG,
    FINISHED_MARKER,
)


def _flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(tree, dict):
        out: dict[str, Any] = {}
        for key, value in tree.items():
            out.update(_flatten(value, f"{prefix}{key}."))
        return out
    return {prefix.rstrip("."): tree}


# How a run is executed, not what it computes: a run may resume under other values (say, with
# step barriers after a streaming run hung, or phased after running out of memory).
RESUMABLE_KEYS = ("scheduling", "placement")


def changed_keys(old: Any, new: Any) -> list[str]:
    """Dotted keys whose values differ between two config mappings (execution keys aside)."""
    a, b = _flatten(old), _flatten(new)
    return sorted(
        k for k in a.keys() | b.keys() if a.get(k) != b.get(k) and k.split(".")[0] not in RESUMABLE_KEYS
    )


def _as_today(tree: Any, source: str, base_dir: Path) -> Any:
    """A stored config read through today's RunConfig: keys added by a later release carry their
    defaults, so an unfinished run of an earlier release still resumes. A config today's schema
    refuses is compared as it was written."""
    from chateval.config import dump_config, parse_config

    try:
        return yaml.safe_load(dump_config(parse_config(tree, source, base_dir)))
    except (ChatEvalError, TypeError, ValueError):
        return tree


def prepare_outdir(outdir: Path, force: bool, config_text: str) -> bool:
    """Create or reopen ``outdir``; return True when an unfinished run there is resumed.

    A finished run is never overwritten without ``force``; an unfinished one is resumed only
    with the same resolved config (the error names the keys that changed). ``force`` removes
    the run files chateval writes, and nothing else.
    """
    if outdir.exists() and not outdir.is_dir():
        raise ConfigError(f"{outdir}: output path exists and is not a folder")
    if force:
        for name in RUN_FILES:
            (outdir / name).unlink(missing_ok=True)
    elif (outdir / FINISHED_MARKER).exists():
        raise ConfigError(f"{outdir} already holds a finished run; pass --force to overwrite it")
    stored = outdir / "config.yaml"
    if stored.is_file():
        old = _as_today(yaml.safe_load(stored.read_text(encoding="utf-8")), str(stored), outdir)
        new = yaml.safe_load(config_text)
        changed = changed_keys(old, new)
        if changed:
            raise ConfigError(
                f"{outdir} holds an unfinished run with a different config (changed: {', '.join(changed)}); "
                "rerun with the same config to resume, or pass --force to start over"
            )
        return True
    outdir.mkdir(parents=True, exist_ok=True)
    write_text(stored, config_text)
    return False
