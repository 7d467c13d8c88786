"""``chateval import``: another tool's pairwise verdicts as a run folder that rescore, report,
export and compare read as any run's.

Everything is read and checked before anything is written: the import config, every verdict
record (a judgment naming a prompt or system the data lacks, an unmapped value, a missing
field: one line naming the file, the record and the field), the labels, the run config the
folder will hold and the metrics. Then the folder's files are written through the run folder's
writers (chateval.record): config.yaml (a run config whose one referee is the imported judge,
with the import's data, or the verdicts file as data of format ``imported``), roster.json,
items.jsonl (the comparisons; without data, ids, systems and labels only), verdicts.jsonl
(chateval.judging.imported), metrics.json and run.json, which says where the verdicts came
from (``imported``: the file, its sha256, when) and that no model ran (no requests, no
tokens). No transcripts: nothing was said here.
"""

import logging
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from chateval.config.files import dump_config, parse_config
from chateval.config.imports import ImportConfig, load_import_config
from chateval.config.run import RunConfig
from chateval.core.choices import RESPONSES_FORMATS
from chateval.core.items import PairwiseItem, Response
from chateval.data.judgments import (
    Judgment,
    Judgments,
    LabelVotes,
    majority,
    read_judgments,
    read_label_votes,
)
from chateval.data.responses import comparison_id, comparison_item, responses_table
from chateval.data.side_files import PairKey
from chateval.errors import DataError
from chateval.evaluation.run_metrics import compute_metrics
from chateval.judging.imported import imported_record
from chateval.record.files import RunFolder
from chateval.record.inputs import file_hash
from chateval.record.items import records_of_items
from chateval.record.migrations import FORMAT_VERSION
from chateval.run.input_files import input_hashes
from chateval.run.outdir import prepare_outdir
from chateval.run.runner import RunResult
from chateval.run.statistics import statistics_settings
from chateval.schema.base import Label
from chateval.schema.roster import Roster
from chateval.schema.run_info import ImportedInfo, ImportedLabels, RunInfo
from chateval.schema.verdicts import VerdictRecord
from chateval.version import __version__

log = logging.getLogger(__name__)
IMPORTED = "imported"  # the backend, strategy and role of an imported judge: no model ran here

Table = dict[str, dict[str, Response]]  # each prompt's responses by system


@dataclass(frozen=True)
class Labelled:
    """The comparisons' labels and where they came from."""

    labels: dict[str, Label]  # item id -> label
    info: ImportedLabels | None


@dataclass(frozen=True)
class Data:
    """The data's responses by prompt and system, and its systems in the order a run of the
    same data names them in its comparisons."""

    table: Table
    systems: list[str]
    against: str | None  # the design's baseline, named second


def _data(config: ImportConfig) -> Data | None:
    """The import's data; None: it has none."""
    if config.data is None:
        return None
    responses = RESPONSES_FORMATS.get(config.data.format)(config.data)
    table, systems = responses_table(responses, config.data)
    return Data(table, systems, config.data.design().against)


def _oriented(judgment: Judgment, data: Data | None) -> Judgment:
    """``judgment`` with its systems named as a run of the same data names them (the data's
    order; a baseline second), so that both runs' items share their ids; without data, as the
    file names them."""
    if data is None:
        return judgment
    a, b = judgment.system_a, judgment.system_b
    if data.against is not None:
        backwards = a == data.against
    else:
        backwards = data.systems.index(a) > data.systems.index(b)
    return judgment.reversed() if backwards else judgment


def _check_in_data(judgment: Judgment, data: Data, config: ImportConfig) -> None:
    """A DataError naming the record and field when the data lacks its prompt or a system's
    response to it."""
    files, source, table = config.judgments, config.data.source if config.data else "", data.table
    if judgment.prompt not in table:
        raise DataError(
            f"{judgment.where}: field {files.prompt!r}: prompt {judgment.prompt!r} is not in the "
            f"data {source}"
        )
    known = data.systems
    for key, system in ((files.system_a, judgment.system_a), (files.system_b, judgment.system_b)):
        if system not in known:
            raise DataError(
                f"{judgment.where}: field {key!r}: system {system!r} is not in the data {source} "
                f"(systems: {', '.join(known)})"
            )
        if system not in table[judgment.prompt]:
            raise DataError(
                f"{judgment.where}: field {key!r}: system {system!r} has no response to prompt "
                f"{judgment.prompt!r} in the data {source}"
            )


def _item(judgment: Judgment, table: Table | None, label: Label | None) -> PairwiseItem:
    """The comparison ``judgment`` judged, A as its record names A; texts from the data."""
    item_id = comparison_id(judgment.prompt, judgment.system_a, judgment.system_b)
    if table is None:
        return PairwiseItem(item_id, "", "", "", label, judgment.system_a, judgment.system_b, judgment.prompt)
    rows = table[judgment.prompt]
    return comparison_item(item_id, rows[judgment.system_a], rows[judgment.system_b], label)


def _labels(config: ImportConfig, kept: list[Judgment]) -> Labelled:
    """Each comparison's label: the records' own (``labels.field``), or the majority of the
    labels file's votes on it in either order (``labels.path``)."""
    source = config.labels
    if source is None:
        return Labelled({}, None)
    labels: dict[str, Label] = {}
    if source.path is None:
        for j in kept:
            if j.label is not None:
                labels[comparison_id(j.prompt, j.system_a, j.system_b)] = j.label
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
    for j in kept:
        keys, found = votes.find(j.prompt, j.system_a, j.system_b)
        if found:
            labels[comparison_id(j.prompt, j.system_a, j.system_b)] = majority(found)
            used.update(keys)
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


def _run_config(config: ImportConfig, source: Path) -> RunConfig:
    """The run config the folder holds: one referee, the imported judge, judged in one answer
    order or both, without soft verdicts; the import's data, or its verdicts file as data."""
    referee, files = config.referee, config.judgments
    data = (
        config.data.model_dump(mode="json")
        if config.data is not None
        else {"format": IMPORTED, "path": str(files.path)}
    )
    tree = {
        "name": config.name,
        "task": "pairwise",
        "data": data,
        "agents": [
            {
                "role": {"name": referee.name, "description": _role_text(config)},
                "model": referee.model,
                "name": referee.name,
            }
        ],
        "rounds": 1,
        "position_calibration": files.swapped_verdict is not None,
        "verdict": {"soft": False},
    }
    return parse_config(tree, str(source), source.parent)


def _role_text(config: ImportConfig) -> str:
    return f"{config.referee.model}'s verdicts, imported from {config.judgments.path} (no model ran here)"


def _roster(config: ImportConfig) -> Roster:
    referee = config.referee
    return {
        "referees": [
            {"name": referee.name, "role": IMPORTED, "role_text": _role_text(config), "model": referee.model}
        ],
        "summarizer_model": referee.model,
        "prompt_style": "paper",
        "models": {
            referee.model: {
                "backend": IMPORTED,
                "replicas": 0,
                "path": None,
                "fingerprint": None,
                "server": None,
                "dtype": None,
                "max_model_len": None,
            }
        },
    }


def _run_info(
    config: ImportConfig,
    source: Path,
    judgments: Judgments,
    labelled: Labelled,
    records: list[VerdictRecord],
    started_at: str,
    seconds: float,
) -> RunInfo:
    """run.json: what was imported, from where; no model ran (no debates, requests or tokens)."""
    files = config.judgments
    inputs = input_hashes(config.data) if config.data is not None else {}
    for extra in (files.path, config.labels.path if config.labels else None):
        if extra is not None:
            inputs[str(extra)] = file_hash(extra)
    imported: ImportedInfo = {
        "path": str(files.path),
        "sha256": inputs[str(files.path)],
        "config": str(source),
        "at": started_at,
        "records": judgments.records,
        "kept": len(judgments.kept),
        "skipped": dict(judgments.skipped),
        "labels": labelled.info,
    }
    return {
        "format_version": FORMAT_VERSION,
        "chateval_version": __version__,
        "name": config.name,
        "task": "pairwise",
        "backend": IMPORTED,
        "strategy": IMPORTED,
        "agents": 1,
        "referees": {config.referee.name: config.referee.model},
        "summarizer_model": config.referee.model,
        "rounds": 0,
        "items": len(records),
        "debates": 0,
        "position_calibration": files.swapped_verdict is not None,
        "scheduling": IMPORTED,
        "early_stopped_debates": 0,
        "steps": 0,
        "batches": 0,
        "engine_steps": 0,
        "requests": 0,
        "prompt_tokens": 0,
        "cached_prompt_tokens": 0,
        "generated_tokens": 0,
        "verdict_parse_failures": sum(r["parse_failures"] for r in records),
        "truncated_items": 0,
        "per_model": {},
        "placement": {},
        "inputs": inputs,
        "imported": imported,
        "model_load_seconds": 0.0,
        "debate_seconds": 0.0,
        "wall_seconds": round(seconds, 3),
        "started_at": started_at,
        "resumed": False,
    }


def import_run(config_path: Path | str, outdir: Path | str | None = None, force: bool = False) -> RunResult:
    """Import the verdicts ``config_path`` describes into the run folder ``outdir`` (default
    runs/NAME); nothing is written unless every record is good (module doc)."""
    started = time.perf_counter()
    started_at = datetime.now(UTC).isoformat(timespec="seconds")
    source = Path(config_path)
    config = load_import_config(source)
    judgments = read_judgments(config)
    data = _data(config)
    if data is not None:
        for judgment in judgments.kept:
            _check_in_data(judgment, data, config)
    kept = [_oriented(judgment, data) for judgment in judgments.kept]
    labelled = _labels(config, kept)
    table = None if data is None else data.table
    items = [
        _item(j, table, labelled.labels.get(comparison_id(j.prompt, j.system_a, j.system_b))) for j in kept
    ]
    referee = config.referee.name
    records = [
        imported_record(j, item, referee, table is not None) for j, item in zip(kept, items, strict=True)
    ]
    run_config = _run_config(config, source)
    settings = statistics_settings(run_config, {referee: config.referee.model}, config.referee.model)
    metrics = compute_metrics(settings, records)
    info = _run_info(config, source, judgments, labelled, records, started_at, time.perf_counter() - started)
    # Every record is good: write the folder (config.yaml first, run.json last).
    target = Path(outdir) if outdir is not None else Path("runs") / config.name
    files = RunFolder(target)
    with files.writing("chateval import"):  # not while a run, a rescore or an import writes it
        prepare_outdir(target, force, dump_config(run_config))
        files.write_roster(_roster(config))
        files.write_items(records_of_items(items))
        files.write_verdicts(records)
        files.write_metrics(metrics)
        files.write_info(info)
    log.info("imported %d comparisons from %s into %s", len(records), config.judgments.path, target)
    return RunResult(target, info, metrics)
