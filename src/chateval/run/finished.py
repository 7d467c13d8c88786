"""A finished run folder read back: everything a report, a rescore or an export needs, from the
folder alone (never the data file, the model registry or the role library it came from), in
today's types whichever release wrote it: config.yaml parsed by today's ``RunConfig``, the
other files through the record (chateval.record.files.RunFolder, which migrates and validates
them, each measure's section by the measure's own type) with this release's panel built from
the config where an earlier format did not record it (chateval.run.roster.todays_panel)."""

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from chateval.config.files import parse_config
from chateval.config.run import RunConfig
from chateval.core.items import Item
from chateval.errors import ChatEvalError, DataError
from chateval.evaluation.measures import registered_measures, top_level
from chateval.record.files import RunFolder
from chateval.record.inputs import changed_inputs
from chateval.record.items import item_of_record
from chateval.record.migrations import TodaysPanel
from chateval.run.roster import todays_panel
from chateval.schema.roster import Roster
from chateval.schema.run_info import RunInfo
from chateval.schema.run_metrics import RunMetrics
from chateval.schema.transcripts import TranscriptRecord
from chateval.schema.verdicts import VerdictRecord


def config_as_today(tree: Any, source: Path, base_dir: Path) -> RunConfig:
    """A stored config of any release as today's ``RunConfig`` (keys added since carry their
    defaults; relative paths resolved against ``base_dir``); a DataError naming ``source`` when
    today's schema refuses it."""
    try:
        return parse_config(tree, str(source), base_dir)
    except (ChatEvalError, TypeError, ValueError) as exc:
        raise DataError(f"{source}: this release cannot read the run's config: {exc}") from None


def read_run_config(files: RunFolder) -> RunConfig:
    """The folder's config.yaml as today's ``RunConfig``."""
    return config_as_today(files.read_config_tree(), files.config, files.path)


def measure_sections() -> dict[str, Any]:
    """Each registered measure's section type, by the measure's name: the record validates the
    measure's section of metrics.json (``measures.<name>``) against it. A measure that names no
    ``schema`` has its section read as written; a top-level one's type is the record's own."""
    return {
        measure.name: schema
        for measure in registered_measures()
        if not top_level(measure) and (schema := getattr(measure, "schema", None)) is not None
    }


def panel_of(config: RunConfig) -> Callable[[], TodaysPanel]:
    """``config``'s panel as this release builds it, built once and only when a folder of an
    earlier format asks (chateval.record.migrations)."""
    return cache(lambda: todays_panel(config))


@dataclass(frozen=True)
class FinishedRun:
    """A finished run folder: its config, run.json, roster and metrics.json (None: none
    written), with its verdicts, debates and items read on demand."""

    folder: Path
    config: RunConfig
    info: RunInfo
    roster: Roster
    metrics: RunMetrics | None

    @property
    def name(self) -> str:
        """The run's name: run.json's, else the folder's."""
        return str(self.info.get("name", self.folder.name))

    @property
    def task(self) -> str:
        """``pairwise`` or ``direct``: run.json's, else the config's."""
        return self.info.get("task") or self.config.task

    @property
    def format_version(self) -> int:
        """The format the folder was written in (chateval.record.migrations.FORMAT_VERSION: today's)."""
        return self.info["format_version"]

    def verdicts(self) -> list[VerdictRecord]:
        """The run's verdict records (verdicts.jsonl), one per item."""
        return RunFolder(self.folder).read_verdicts()

    def transcripts(self) -> list[TranscriptRecord]:
        """The run's debates (transcripts.jsonl, or its compressed copy); empty when it kept none."""
        return RunFolder(self.folder).read_transcripts()

    def items(self) -> list[Item] | None:
        """The items as the run debated them (items.jsonl); None for a folder written before
        run folders kept them (format 2 and earlier)."""
        records = RunFolder(self.folder).read_items()
        return None if records is None else [item_of_record(r) for r in records]

    def items_notice(self, shown_from_others: bool = False) -> str | None:
        """One line for a report when the items it shows are not the data file's: the file changed
        since the run, or the folder kept no items (``shown_from_others``: the report shows the
        texts another of its runs recorded for the same item ids); None when neither."""
        if not RunFolder(self.folder).items.is_file():
            shown = (
                "the texts shown are another run's records of the same item ids"
                if shown_from_others
                else "the items' texts are not shown"
            )
            if self.format_version < 3:
                return (
                    f"{self.name}: written by chateval {self.info.get('chateval_version')} (run folder "
                    f"format {self.format_version}), before run folders kept their items: {shown}"
                )
            return f"{self.name}: its items.jsonl is missing: {shown}"
        changed = self.changed_inputs()
        if changed:
            return (
                f"{self.name}: {', '.join(changed)} changed since the run; shown are the items as the "
                "run debated them (its items.jsonl)"
            )
        return None

    def changed_inputs(self) -> list[str]:
        """The run's input files that are still where they were, with other contents."""
        return changed_inputs(self.info.get("inputs") or {})


def load_finished_run(folder: Path | str) -> FinishedRun:
    """Read a finished run folder of any release: config.yaml as a ``RunConfig``, run.json,
    roster.json and metrics.json in today's format, each validated. DataError names the file,
    line and field that cannot be read."""
    folder = Path(folder)
    files = RunFolder(folder)
    if not files.finished():
        raise DataError(_not_finished(files))
    config = read_run_config(files)
    todays = panel_of(config)
    info = files.read_info(todays)
    task = info.get("task") or config.task
    roster = files.read_roster(info, todays)
    return FinishedRun(folder, config, info, roster, files.read_metrics(task, measure_sections()))


def _not_finished(files: RunFolder) -> str:
    """Why a folder without run.json cannot be read as a finished run, and what to do: it is
    not there, nothing of a run is there, or a run started there and has not finished
    (stopped, killed, or still going)."""
    if not files.path.is_dir():
        return f"{files.path}: no such run folder"
    if not files.config.is_file():
        return f"{files.path}: not a run folder (no {files.info.name}, no {files.config.name})"
    return (
        f"{files.path}: not a finished run folder (no {files.info.name}): its run was stopped or is "
        "still going; the same `chateval run` (or `chateval import`) command finishes it"
    )
