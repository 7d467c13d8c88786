"""A run folder: the only code that knows its files' names, reading and writing them.

config.yaml (the resolved config), journal.jsonl (finished debate steps, for resuming),
roster.json (the panel and its models), items.jsonl (the items as debated),
transcripts.jsonl, verdicts.jsonl, metrics.json, engine.log, and run.json, written last: its
presence marks a finished run; writer.lock is there while a command writes the folder
(chateval.record.lock). Every file is written atomically (core.textfile) and read
through its record type (chateval.record.reading), migrated first where an earlier release
wrote it (chateval.record.migrations). config.yaml is read as written: the run config parses
it (chateval.run.finished), as this package imports nothing above the record types.
"""

from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import yaml

from chateval.core.file_access import private_folder
from chateval.core.textfile import write_bytes, write_json, write_jsonl, write_text
from chateval.errors import ConfigError, DataError
from chateval.record.lock import holding
from chateval.record.migrations import TodaysPanel, info_as_today, metrics_as_today, roster_as_today
from chateval.record.reading import read_document, read_json_object, read_lines, validated
from chateval.schema.items import ItemRecord
from chateval.schema.roster import Roster
from chateval.schema.run_info import RunInfo
from chateval.schema.run_metrics import DirectRunMetrics, PairwiseRunMetrics, RunMetrics
from chateval.schema.transcripts import TranscriptRecord
from chateval.schema.verdicts import VerdictRecord


class RunFolder:
    """The files of the run folder at ``path``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.config = path / "config.yaml"
        self.roster = path / "roster.json"
        self.items = path / "items.jsonl"
        self.journal = path / "journal.jsonl"
        self.transcripts = path / "transcripts.jsonl"
        # A folder kept for reading (docs/results) may hold them compressed.
        self.transcripts_gz = path / "transcripts.jsonl.gz"
        self.verdicts = path / "verdicts.jsonl"
        self.metrics = path / "metrics.json"
        self.engine_log = path / "engine.log"
        self.info = path / "run.json"  # written last: a finished run's mark
        self.lock = path / "writer.lock"  # there while a command writes here (chateval.record.lock)

    def files(self) -> tuple[Path, ...]:
        """Every file a run writes here (``--force`` removes these and nothing else)."""
        return (
            self.config,
            self.roster,
            self.items,
            self.journal,
            self.transcripts,
            self.verdicts,
            self.metrics,
            self.engine_log,
            self.info,
        )

    def finished(self) -> bool:
        return self.info.is_file()

    def create(self) -> None:
        """Make the folder (and its parents) private to its owner; one there already keeps its
        mode (chateval.core.file_access.private_folder)."""
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"{self.path}: output path exists and is not a folder")
        try:
            private_folder(self.path)
        except OSError as exc:
            raise ConfigError(f"{self.path}: cannot create the run folder ({exc.strerror})") from None

    def writing(self, command: str) -> AbstractContextManager[None]:
        """Hold this folder's writer lock while the block runs, as ``command`` (``"chateval
        run"``), creating the folder first when it is not there: a second writer is refused at
        once, naming the holder; readers are never blocked (chateval.record.lock)."""
        self.create()
        return holding(self.lock, command)

    def remove_run_files(self) -> None:
        """Remove every file a run writes here (``--force``), and nothing else."""
        for path in self.files():
            path.unlink(missing_ok=True)

    def require(self, *paths: Path, why: str) -> None:
        """A DataError naming the first of ``paths`` missing, and ``why`` it is needed."""
        for path in paths:
            if not path.is_file():
                raise DataError(f"{self.path}: no {path.name}; {why}")

    def read_config_tree(self) -> Any:
        """config.yaml as written (a mapping, unless the file was edited into something else);
        a DataError when it cannot be read."""
        try:
            return yaml.safe_load(self.config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise DataError(f"{self.config}: unreadable ({exc})") from None

    def read_info(self, todays: Callable[[], TodaysPanel]) -> RunInfo:
        """run.json, in today's shape (``format_version`` as written; older releases' counters
        renamed). A run.json of an older release without referees gets them from ``todays``
        panel (chateval.record.migrations.info_as_today)."""
        return read_document(self.info, RunInfo, lambda raw: info_as_today(raw, self.info, todays))

    def read_metrics(self, task: str, sections: Mapping[str, Any] | None = None) -> RunMetrics | None:
        """metrics.json of a ``task`` run in today's shape, or None when the run wrote none; each
        section under ``measures`` validated by its measure's type in ``sections`` (a measure's
        name -> the type; a section of a measure without one is read as written)."""
        if not self.metrics.is_file():
            return None

        def migrate(raw: dict[str, Any]) -> dict[str, Any]:
            return metrics_as_today(raw, task)

        try:
            metrics: RunMetrics
            if task == "pairwise":
                metrics = read_document(self.metrics, PairwiseRunMetrics, migrate)
            else:
                metrics = read_document(self.metrics, DirectRunMetrics, migrate)
            typed = sections or {}
            for name, section in metrics.get("measures", {}).items():
                if name in typed:
                    validated(section, typed[name], str(self.metrics), at=f"measures.{name}")
            return metrics
        except DataError as exc:
            raise DataError(
                f"{exc}; `chateval rescore {self.path}` writes it again from the verdicts"
            ) from None

    def read_verdicts(self) -> list[VerdictRecord]:
        """verdicts.jsonl's records, validated (a DataError names a bad line and field)."""
        return read_lines(self.verdicts, VerdictRecord)

    def transcripts_file(self) -> Path | None:
        """transcripts.jsonl, or its gzip-compressed copy when only that is here; None: neither."""
        return next((p for p in (self.transcripts, self.transcripts_gz) if p.is_file()), None)

    def read_transcripts(self) -> list[TranscriptRecord]:
        """transcripts.jsonl's records (or transcripts.jsonl.gz's); empty when it kept none."""
        found = self.transcripts_file()
        return [] if found is None else read_lines(found, TranscriptRecord)

    def read_items(self) -> list[ItemRecord] | None:
        """items.jsonl's records; None for a folder of a release before format 3 (none kept)."""
        return read_lines(self.items, ItemRecord) if self.items.is_file() else None

    def read_roster(self, info: RunInfo, todays: Callable[[], TodaysPanel]) -> Roster:
        """roster.json; a folder of a release before format 3 gets one rebuilt from its run.json
        and ``todays`` panel (chateval.record.migrations.roster_as_today)."""
        if self.roster.is_file():
            return read_document(self.roster, Roster)
        return roster_as_today(info, todays())

    def write_config(self, text: str) -> None:
        write_text(self.config, text)

    def write_roster(self, roster: Roster) -> None:
        write_json(self.roster, roster)

    def write_items(self, records: Iterable[ItemRecord]) -> None:
        write_jsonl(self.items, records)

    def write_transcripts(self, records: Iterable[TranscriptRecord]) -> None:
        write_jsonl(self.transcripts, records)

    def write_verdicts(self, records: Iterable[VerdictRecord]) -> None:
        write_jsonl(self.verdicts, records)

    def write_metrics(self, metrics: RunMetrics) -> None:
        write_json(self.metrics, metrics)

    def write_info(self, info: RunInfo) -> None:
        """run.json: written last, it marks the run finished."""
        write_json(self.info, info)

    def copy_as_written(self, into: "RunFolder", name: str) -> None:
        """Copy into ``into`` what a copy of this run keeps of it as its release wrote it (read
        back through the migrations like this folder's): its debates, roster.json and, written
        last, its run.json under the copy's ``name``."""
        for kept in (self.transcripts_file(), self.roster):
            if kept is not None and kept.is_file():
                write_bytes(into.path / kept.name, kept.read_bytes())
        write_json(into.info, read_json_object(self.info) | {"name": name})
