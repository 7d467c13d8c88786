"""``chateval import``: another tool's pairwise verdicts as a run folder that rescore, report,
export and compare read as any run's.

Everything is read and checked before anything is written: the import config, every verdict
record (a judgment naming a prompt or system the data lacks, an unmapped value, a missing
field: one line naming the file, the record and the field), the items judged
(chateval.run.import_items), the labels, the run config the folder will hold and the metrics.
Then the folder's files are written through the run folder's writers (chateval.record):
config.yaml (a run config whose one referee is the imported judge, with the import's data, or
the verdicts file as data of format ``imported``), roster.json, items.jsonl (the comparisons;
without data, ids, systems and labels only), verdicts.jsonl (chateval.judging.imported),
metrics.json and run.json, which says where the verdicts came from (``imported``: the file or
files, their sha256, when) and that no model ran (no requests, no tokens). No transcripts:
nothing was said here.
"""

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from chateval.config.imports import ImportConfig, load_import_config
from chateval.core.items import PairwiseItem
from chateval.data.files import expand_path
from chateval.data.judgments import (
    Judgment,
    Judgments,
    LabelVotes,
    majority,
    read_judgments,
    read_label_votes,
)
from chateval.data.side_files import PairKey
from chateval.errors import DataError
from chateval.judging.imported import imported_record
from chateval.run.import_items import join_items, with_labels
from chateval.run.imported_folder import (
    ImportedPanel,
    ImportStart,
    import_inputs,
    imported_run_config,
    write_imported,
)
from chateval.run.runner import RunResult
from chateval.schema.base import Label
from chateval.schema.run_info import ImportedInfo, ImportedLabels

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Labelled:
    """The comparisons' labels and where they came from."""

    labels: dict[str, Label]  # item id -> label
    info: ImportedLabels | None


def _labels(config: ImportConfig, kept: list[Judgment], items: list[PairwiseItem]) -> Labelled:
    """Each comparison's label by item id: the records' own (``labels.field``), the majority
    of the labels file's votes on it in either order (``labels.path``), or without ``labels``
    the pairwise data's own (``items``' labels)."""
    source = config.labels
    if source is None:
        return _data_labels(config, items)
    labels: dict[str, Label] = {}
    if source.path is None:
        for j, item in zip(kept, items, strict=True):
            if j.label is not None:
                labels[item.id] = j.label
        count = len(labels)
        own: ImportedLabels = {
            "kind": source.labels_kind,
            "path": None,
            "labelled": count,
            "votes": count,
            "unused": 0,
        }
        return Labelled(labels, own)
    votes: LabelVotes = read_label_votes(source, config.kept_turn)
    used: set[PairKey] = set()
    for j, item in zip(kept, items, strict=True):
        keys, found = votes.find(j.prompt, str(j.system_a), str(j.system_b))
        if found:
            labels[item.id] = majority(found)
            used.update(keys)
    # A vote naming a system no verdict judged (misspelt, renamed, another file's) would leave
    # its comparisons unlabelled without a word: refused, naming the record, field and system.
    judged = {system for j in kept for system in (j.system_a, j.system_b) if system is not None}
    for (_, a, b), where in votes.where.items():
        for key, system in ((source.system_a, a), (source.system_b, b)):
            if system not in judged:
                raise DataError(
                    f"{where}: field {key!r}: system {system!r} is judged by no imported verdict "
                    f"(their systems: {', '.join(sorted(judged))})"
                )
    unused = [key for key in votes.votes if key not in used]
    if unused:
        log.warning(
            "%s: %d labelled comparison(s) judged by no imported verdict (first: %s)",
            source.path,
            len(unused),
            votes.where[unused[0]],
        )
    info: ImportedLabels = {
        "kind": source.labels_kind,
        "path": str(source.path),
        "labelled": len(labels),
        "votes": sum(len(v) for v in votes.votes.values()),
        "unused": len(unused),
    }
    return Labelled(labels, info)


def _data_labels(config: ImportConfig, items: list[PairwiseItem]) -> Labelled:
    """The pairwise data's own labels (human labels, as a run of the data reads them); none
    without data or labels in it."""
    labels = {item.id: item.label for item in items if item.label is not None}
    if config.data is None or not labels:
        return Labelled({}, None)
    info: ImportedLabels = {
        "kind": "human",
        "path": config.data.source,
        "labelled": len(labels),
        "votes": len(labels),
        "unused": 0,
    }
    return Labelled(labels, info)


def _role_text(config: ImportConfig) -> str:
    return f"{config.referee.model}'s verdicts, imported from {config.judgments.path} (no model ran here)"


def _imported(
    config: ImportConfig, source: Path, judgments: Judgments, labelled: Labelled, at: str
) -> tuple[ImportedInfo, dict[str, str]]:
    """run.json's ``imported`` (what was imported, from where) and ``inputs`` (every file read:
    the data's, the verdicts files, the labels file)."""
    files = config.judgments
    verdict_files = expand_path(files.path)
    inputs = import_inputs(config.data, [*verdict_files, config.labels.path if config.labels else None])
    imported: ImportedInfo = {
        "path": str(files.path),
        "sha256": _verdicts_hash([inputs[str(file)] for file in verdict_files]),
        "config": str(source),
        "at": at,
        "records": judgments.records,
        "kept": len(judgments.kept),
        "skipped": dict(judgments.skipped),
        "labels": labelled.info,
    }
    return imported, inputs


def _verdicts_hash(hashes: list[str]) -> str:
    """The verdicts' sha256: the file's; of several files (a folder, a glob), the sha256 of
    their own, one a line in the files' order (each is in ``inputs`` too)."""
    if len(hashes) == 1:
        return hashes[0]
    return "sha256:" + hashlib.sha256("".join(f"{h}\n" for h in hashes).encode("ascii")).hexdigest()


def import_run(config_path: Path | str, outdir: Path | str | None = None, force: bool = False) -> RunResult:
    """Import the verdicts ``config_path`` describes into the run folder ``outdir`` (default
    runs/NAME); nothing is written unless every record is good (module doc)."""
    started = ImportStart.now()
    source = Path(config_path)
    config = load_import_config(source)
    judgments = read_judgments(config)
    joined = join_items(config, judgments.kept)
    labelled = _labels(config, joined.judgments, joined.items)
    items = with_labels(joined.items, labelled.labels)
    referee = config.referee.name
    records = [
        imported_record(j, item, referee, joined.texts)
        for j, item in zip(joined.judgments, items, strict=True)
    ]
    # One referee, the imported judge, judged in one answer order or both, without soft verdicts.
    panel = ImportedPanel({referee: config.referee.model}, {referee: _role_text(config)})
    files = config.judgments
    run_config = imported_run_config(
        source,
        config.name,
        "pairwise",
        panel,
        config.data,
        files.path,
        position_calibration=files.swapped_verdict is not None,
        verdict={"soft": False},
    )
    imported, inputs = _imported(config, source, judgments, labelled, started.at)
    result = write_imported(run_config, panel, items, records, imported, inputs, started, outdir, force)
    log.info("imported %d comparisons from %s into %s", len(records), files.path, result.outdir)
    return result
