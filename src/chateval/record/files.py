"""A run folder: the only code that knows its files' names, reading and writing them.

config.yaml (the resolved config), journal.jsonl (finished debate steps, for resuming),
roster.json (the panel and its models), items.jsonl (the items as debated),
transcripts.jsonl, verdicts.jsonl, metrics.json, engine.log, and run.json, written last: its
presence marks a finished run. Every file is written atomically (core.textfile) and read
through its record type (chateval.record.reading), migrated first where an earlier release
wrote it (chateval.record.migrations).
"""

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import yaml

from chateval.config.run import RunConfig
from chateval.core.file_access import private_folder
from chateval.core.schema.records import ItemRecord, Roster, RunInfo, TranscriptRecord, VerdictRecord
from chateval.core.textfile import write_json, write_jsonl, write_text
from chateval.errors import ChatEvalError, ConfigError, DataError
from chateval.evaluation.run_metrics import DirectRunMetrics, PairwiseRunMetrics, RunMetrics
from chateval.record.migrations import config_as_today, info_as_today, metrics_as_today, roster_as_today
from chateval.record.reading import read_document, read_lines


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

    def require(self, *paths: Path, why: str) -> None:
        """A DataError naming the first of ``paths`` missing, and ``why`` it is needed."""
        for path in paths:
            if not path.is_file():
                raise DataError(f"{self.path}: no {path.name}; {why}")

    def read_config_tree(self) -> Any:
        """config.yaml as written (a mapping, unless the file was edited into something else)."""
        return yaml.safe_load(self.config.read_text(encoding="utf-8"))

    def read_info(self, config: RunConfig) -> RunInfo:
        """run.json, in today's shape (``format_version`` as written; older releases' counters
        renamed). A run.json of an older release without referees gets them from ``config``."""
        return read_document(self.info, RunInfo, lambda raw: info_as_today(raw, config, self.info))

    def read_config(self) -> RunConfig:
        """config.yaml as today's ``RunConfig`` (keys added since carry their defaults)."""
        try:
            tree = self.read_config_tree()
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            raise DataError(f"{self.config}: unreadable ({exc})") from None
        return config_as_today(tree, self.config, self.path)

    def read_metrics(self, task: str) -> RunMetrics | None:
        """metrics.json of a ``task`` run in today's shape, or None when the run wrote none."""
        if not self.metrics.is_file():
            return None

        def migrate(raw: dict[str, Any]) -> dict[str, Any]:
            return metrics_as_today(raw, task)

        try:
            if task == "pairwise":
                return read_document(self.metrics, PairwiseRunMetrics, migrate)
            return read_document(self.metrics, DirectRunMetrics, migrate)
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

    def read_roster(self, config: RunConfig, info: RunInfo) -> Roster:
        """roster.json; a folder of a release before format 3 gets one rebuilt from its
        config.yaml and run.json (chateval.record.migrations.roster_as_today)."""
        if self.roster.is_file():
            return read_document(self.roster, Roster)
        return roster_as_today(config, info)

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
