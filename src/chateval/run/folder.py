"""A run folder: the only code that knows its files' names and formats, reading and writing.

config.yaml (the resolved config), journal.jsonl (finished debate steps, for resuming),
transcripts.jsonl, verdicts.jsonl, metrics.json, engine.log, and run.json, written last: its
presence marks a finished run. Every file is written atomically (core.textfile).
"""

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import yaml

from chateval.config.run import RunConfig
from chateval.core.file_access import private_folder
from chateval.core.schema.records import RunInfo, TranscriptRecord, VerdictRecord
from chateval.core.textfile import write_json, write_jsonl, write_text
from chateval.data.jsonl import read_jsonl
from chateval.errors import ChatEvalError, ConfigError, DataError
from chateval.evaluation.run_metrics import RunMetrics
from chateval.run.migrations import (
    check_readable,
    config_as_today,
    folder_format,
    info_as_today,
    metrics_as_today,
)


class RunFolder:
    """The files of the run folder at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config = path / "config.yaml"
        self.journal = path / "journal.jsonl"
        self.transcripts = path / "transcripts.jsonl"
        # A folder kept for reading (docs/results) may hold them compressed.
        self.transcripts_gz = path / "transcripts.jsonl.gz"
        self.verdicts = path / "verdicts.jsonl"
        self.metrics = path / "metrics.json"
        self.engine_log = path / "engine.log"
        self.info = path / "run.json"  # written last: a finished run's mark

    def files(self) -> tuple[Path, ...]:
        """Every file a run writes here (``--force`` removes these and nothing else)."""
        return (
            self.config,
            self.journal,
            self.transcripts,
            self.verdicts,
            self.metrics,
            self.engine_log,
            self.info,
        )

    def finished(self) -> bool:
        return self.info.is_file()

    def require(self, *paths: Path, why: str) -> None:
        """A DataError naming the first of ``paths`` missing, and ``why`` it is needed."""
        for path in paths:
            if not path.is_file():
                raise DataError(f"{self.path}: no {path.name}; {why}")

    def read_config_tree(self) -> Any:
        """config.yaml as written (a mapping, unless the file was edited into something else)."""
        return yaml.safe_load(self.config.read_text(encoding="utf-8"))

    def read_info(self) -> dict[str, Any]:
        """run.json."""
        info: dict[str, Any] = json.loads(self.info.read_text(encoding="utf-8"))
        return info

    def read_metrics(self) -> dict[str, Any] | None:
        """metrics.json, or None when the run wrote none."""
        if not self.metrics.is_file():
            return None
        metrics: dict[str, Any] = json.loads(self.metrics.read_text(encoding="utf-8"))
        return metrics

    def read_verdicts(self) -> list[tuple[int, dict[str, Any]]]:
        """verdicts.jsonl's records with their line numbers (DataError names a bad line)."""
        return read_jsonl(self.verdicts)

    def transcripts_file(self) -> Path | None:
        """transcripts.jsonl, or its gzip-compressed copy when only that is here; None: neither."""
        return next((p for p in (self.transcripts, self.transcripts_gz) if p.is_file()), None)

    def read_transcripts(self) -> list[tuple[int, dict[str, Any]]]:
        """transcripts.jsonl's records (or transcripts.jsonl.gz's) with their line numbers."""
        return read_jsonl(self.transcripts_file() or self.transcripts)

    def write_config(self, text: str) -> None:
        write_text(self.config, text)

    def write_transcripts(self, records: Iterable[TranscriptRecord]) -> None:
        write_jsonl(self.transcripts, records)

    def write_verdicts(self, records: Iterable[VerdictRecord]) -> None:
        write_jsonl(self.verdicts, records)

    def write_metrics(self, metrics: RunMetrics) -> None:
        write_json(self.metrics, metrics)

    def write_info(self, info: RunInfo) -> None:
        """run.json: written last, it marks the run finished."""
        write_json(self.info, info)


@dataclass(frozen=True)
class FinishedRun:
    """A finished run folder read back, in today's types whichever release wrote it
    (chateval.run.migrations): its config, run.json and metrics.json (None: none written)."""

    folder: Path
    config: RunConfig
    info: RunInfo
    metrics: RunMetrics | None

    @property
    def name(self) -> str:
        return str(self.info.get("name", self.folder.name))

    @property
    def task(self) -> str:
        return self.info.get("task") or self.config.task

    @property
    def format_version(self) -> int:
        """The format the folder was written in (chateval.run.migrations.FORMAT_VERSION: today's)."""
        return self.info["format_version"]

    def verdicts(self) -> list[VerdictRecord]:
        """The run's verdict records (verdicts.jsonl), as a run wrote them."""
        return [cast(VerdictRecord, record) for _, record in RunFolder(self.folder).read_verdicts()]

    def transcripts(self) -> list[TranscriptRecord]:
        """The run's debates (transcripts.jsonl, or its compressed copy); empty when it kept none."""
        files = RunFolder(self.folder)
        if files.transcripts_file() is None:
            return []
        return [cast(TranscriptRecord, record) for _, record in files.read_transcripts()]


def load_finished_run(folder: Path | str) -> FinishedRun:
    """Read a finished run folder of any release: config.yaml as a ``RunConfig``, run.json and
    metrics.json (if present) migrated to today's format. DataError names what cannot be read."""
    folder = Path(folder)
    files = RunFolder(folder)
    if not files.finished():
        raise DataError(f"{folder}: not a finished run folder (no run.json)")
    try:
        raw_info = files.read_info()
        tree = files.read_config_tree()
        raw_metrics = files.read_metrics()
    except (OSError, json.JSONDecodeError, yaml.YAMLError) as exc:
        raise DataError(f"{folder}: unreadable run files ({exc})") from None
    check_readable(folder_format(raw_info), files.info)
    config = config_as_today(tree, files.config, folder)
    info = info_as_today(raw_info, config)
    task = info.get("task") or config.task
    metrics = None if raw_metrics is None else cast(RunMetrics, metrics_as_today(raw_metrics, task))
    return FinishedRun(folder, config, info, metrics)


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
    from chateval.config.files import dump_config, parse_config

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
    files = RunFolder(outdir)
    if force:
        for path in files.files():
            path.unlink(missing_ok=True)
    elif files.info.exists():
        raise ConfigError(f"{outdir} already holds a finished run; pass --force to overwrite it")
    stored = files.config
    if stored.is_file():
        old = _as_today(files.read_config_tree(), str(stored), outdir)
        new = yaml.safe_load(config_text)
        changed = changed_keys(old, new)
        if changed:
            raise ConfigError(
                f"{outdir} holds an unfinished run with a different config (changed: {', '.join(changed)}); "
                "rerun with the same config to resume, or pass --force to start over"
            )
        return True
    private_folder(outdir)
    write_text(stored, config_text)
    return False
