"""What every run folder made by ``chateval import`` holds alike (pairwise verdicts,
chateval.run.importing; direct scores, chateval.run.importing_direct; ChatEval's 2023 outputs,
chateval.run.importing_2023): a run config whose referees are the judges that ran nowhere here,
the sha256 of every file read, the roster of those judges, run.json saying where the verdicts
came from and that no model ran (no debates, requests or tokens), the metrics, and the folder
written through the run folder's writers (chateval.record), config.yaml first and run.json last.
"""

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from chateval.config.data import DataConfig
from chateval.config.files import dump_config, parse_config
from chateval.config.run import RunConfig
from chateval.core.items import Item
from chateval.evaluation.run_metrics import compute_metrics
from chateval.record.files import RunFolder
from chateval.record.inputs import file_hash
from chateval.record.items import records_of_items
from chateval.record.migrations import FORMAT_VERSION
from chateval.run.input_files import input_hashes
from chateval.run.outdir import prepare_outdir
from chateval.run.runner import RunResult
from chateval.run.statistics import statistics_settings
from chateval.schema.roster import Roster
from chateval.schema.run_info import ImportedInfo, RunInfo
from chateval.schema.verdicts import VerdictRecord
from chateval.version import __version__

IMPORTED = "imported"  # the backend, strategy and role of an imported judge: no model ran here


@dataclass(frozen=True)
class ImportedPanel:
    """The judges whose verdicts a folder holds: each referee's name, its model and the text
    that stands for its role (where its verdicts came from)."""

    models: Mapping[str, str]  # referee name -> model
    role_texts: Mapping[str, str]  # referee name -> text

    @property
    def summarizer(self) -> str:
        """The model run.json names as the summarizer's: the first referee's (none ran)."""
        return next(iter(self.models.values()))


@dataclass(frozen=True)
class ImportStart:
    """When an import began: the time run.json records and the clock its wall time runs from."""

    at: str  # ISO 8601, UTC
    clock: float  # time.perf_counter()

    @classmethod
    def now(cls) -> "ImportStart":
        return cls(datetime.now(UTC).isoformat(timespec="seconds"), time.perf_counter())

    @property
    def seconds(self) -> float:
        """The seconds since the import began."""
        return time.perf_counter() - self.clock


def imported_run_config(
    source: Path,
    name: str,
    task: str,
    panel: ImportedPanel,
    data: DataConfig | None,
    verdicts: Path,
    **settings: Any,
) -> RunConfig:
    """The run config a folder imported by the config ``source`` holds: ``name`` and ``task``,
    the panel's referees as its agents in one round, the import's data or, without it, the
    ``verdicts`` file as data of format ``imported`` (it holds nothing to debate), and the
    task's ``settings`` (the verdict's, position calibration, dimensions)."""
    tree = {
        "name": name,
        "task": task,
        "data": data.model_dump(mode="json")
        if data is not None
        else {"format": IMPORTED, "path": str(verdicts)},
        "agents": [
            {
                "role": {"name": referee, "description": panel.role_texts[referee]},
                "model": model,
                "name": referee,
            }
            for referee, model in panel.models.items()
        ],
        "rounds": 1,
        **settings,
    }
    return parse_config(tree, str(source), source.parent)


def import_inputs(data: DataConfig | None, files: Iterable[Path | None]) -> dict[str, str]:
    """run.json's ``inputs``: the sha256 of every file an import read, by path, the data's
    first, then the import's own ``files`` (None: a file not given)."""
    inputs = input_hashes(data) if data is not None else {}
    for file in files:
        if file is not None:
            inputs[str(file)] = file_hash(file)
    return inputs


def _roster(panel: ImportedPanel) -> Roster:
    """roster.json: the imported referees, each model served by nothing (``imported``)."""
    return {
        "referees": [
            {"name": name, "role": IMPORTED, "role_text": panel.role_texts[name], "model": model}
            for name, model in panel.models.items()
        ],
        "summarizer_model": panel.summarizer,
        "prompt_style": "paper",
        "models": {
            model: {
                "backend": IMPORTED,
                "replicas": 0,
                "path": None,
                "fingerprint": None,
                "server": None,
                "dtype": None,
                "max_model_len": None,
            }
            for model in dict.fromkeys(panel.models.values())
        },
    }


def _run_info(
    config: RunConfig,
    panel: ImportedPanel,
    records: Sequence[VerdictRecord],
    imported: ImportedInfo,
    inputs: dict[str, str],
    started: ImportStart,
) -> RunInfo:
    """run.json of an imported run: what was imported, from where; no model ran."""
    return {
        "format_version": FORMAT_VERSION,
        "chateval_version": __version__,
        "name": config.name,
        "task": config.task,
        "backend": IMPORTED,
        "strategy": IMPORTED,
        "agents": len(panel.models),
        "referees": dict(panel.models),
        "summarizer_model": panel.summarizer,
        "rounds": 0,
        "items": len(records),
        "debates": 0,
        "position_calibration": config.calibrated,
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
        "wall_seconds": round(started.seconds, 3),
        "started_at": started.at,
        "resumed": False,
    }


def write_imported(
    config: RunConfig,
    panel: ImportedPanel,
    items: Sequence[Item],
    records: list[VerdictRecord],
    imported: ImportedInfo,
    inputs: dict[str, str],
    started: ImportStart,
    outdir: Path | str | None,
    force: bool,
) -> RunResult:
    """Compute the metrics of ``records`` and write the folder ``outdir`` (default runs/NAME; a
    finished run there only with ``force``): config.yaml first, run.json last."""
    metrics = compute_metrics(statistics_settings(config, panel.models, panel.summarizer), records)
    info = _run_info(config, panel, records, imported, inputs, started)
    target = Path(outdir) if outdir is not None else Path("runs") / config.name
    files = RunFolder(target)
    with files.writing("chateval import"):  # not while a run, a rescore or an import writes it
        prepare_outdir(target, force, dump_config(config))
        files.write_roster(_roster(panel))
        files.write_items(records_of_items(items))
        files.write_verdicts(records)
        files.write_metrics(metrics)
        files.write_info(info)
    return RunResult(target, info, metrics)
