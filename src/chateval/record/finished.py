"""A finished run folder read back: everything a report, a rescore or an export needs, from the
folder alone (never the data file, the model registry or the role library it came from), in
today's types whichever release wrote it."""

from dataclasses import dataclass
from pathlib import Path

from chateval.config.run import RunConfig
from chateval.core.items import Item
from chateval.core.schema.records import Roster, RunInfo, TranscriptRecord, VerdictRecord
from chateval.errors import DataError
from chateval.evaluation.run_metrics import RunMetrics
from chateval.record.files import RunFolder
from chateval.record.inputs import changed_inputs
from chateval.record.items import item_of_record


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
        return str(self.info.get("name", self.folder.name))

    @property
    def task(self) -> str:
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
        raise DataError(f"{folder}: not a finished run folder (no run.json)")
    config = files.read_config()
    info = files.read_info(config)
    task = info.get("task") or config.task
    return FinishedRun(folder, config, info, files.read_roster(config, info), files.read_metrics(task))
