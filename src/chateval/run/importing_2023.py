"""``chateval import`` of ChatEval's own 2023 outputs (``format: chateval_2023``): the FairEval
``pair_comparison_results.json`` of both answer orders as a pairwise run folder, every referee's
reply read by the 2023 rule and each item decided by the paper's (chateval.judging.verdicts_2023),
labelled by the data's human labels, so that its accuracy and kappa are the paper's numbers for
those outputs, and ``chateval compare`` sets them beside a chateval panel on the same items.

Everything is read and checked before anything is written (the config, the data, every output
record against its item). The folder's referees are the outputs' roles, all on the config's
model; config.yaml is a run config of the data with those referees, both answer orders and the
2023 verdict settings (half points, a failed verdict a tie), so nothing is copied in by hand.
"""

import logging
from pathlib import Path

from chateval.config.chateval_imports import ChatEval2023ImportConfig
from chateval.data.chateval_outputs import Outputs, read_outputs
from chateval.judging.verdicts_2023 import record_2023
from chateval.run.imported_folder import (
    ImportedPanel,
    ImportStart,
    import_inputs,
    imported_run_config,
    write_imported,
)
from chateval.run.runner import RunResult
from chateval.schema.run_info import ImportedInfo, ImportedLabels

log = logging.getLogger(__name__)


def _panel(config: ChatEval2023ImportConfig, outputs: Outputs) -> ImportedPanel:
    where = config.outputs.path
    return ImportedPanel(
        {role: config.model for role in outputs.roles},
        {
            role: f"{role} in ChatEval's 2023 outputs, imported from {where} (no model ran here)"
            for role in outputs.roles
        },
    )


def _labels(config: ChatEval2023ImportConfig, outputs: Outputs) -> ImportedLabels | None:
    """The data's human labels: how many judged items carry one, and how many labelled items
    the outputs did not reach."""
    if not outputs.labelled:
        return None
    judged = sum(1 for judged in outputs.judged if judged.item.label is not None)
    return {
        "kind": "human",
        "path": config.data.source,
        "labelled": judged,
        "votes": outputs.labelled,
        "unused": outputs.labelled - judged,
    }


def import_chateval_2023(
    config: ChatEval2023ImportConfig, source: Path, outdir: Path | str | None = None, force: bool = False
) -> RunResult:
    """Import the outputs ``config`` (read from ``source``) describes into the run folder
    ``outdir`` (default runs/NAME); nothing is written unless every record is good."""
    started = ImportStart.now()
    outputs = read_outputs(config)
    records = [record_2023(judged.item, judged.orders) for judged in outputs.judged]
    items = [judged.item for judged in outputs.judged]
    panel = _panel(config, outputs)
    files = config.outputs
    # The data, the outputs' referees, the answer orders they judged, and the 2023 verdict
    # (scores 1-10 with halves, a failed verdict a tie).
    run_config = imported_run_config(
        source,
        config.name,
        "pairwise",
        panel,
        config.data,
        files.path,
        position_calibration=files.swapped_path is not None,
        verdict={"low": 1, "high": 10, "half_points": True, "on_failure": "tie", "soft": False},
    )
    inputs = import_inputs(config.data, [files.path, files.swapped_path])
    imported: ImportedInfo = {
        "path": str(files.path),
        "sha256": inputs[str(files.path)],
        "config": str(source),
        "at": started.at,
        "records": len(outputs.judged),
        "kept": len(records),
        "skipped": {},
        "labels": _labels(config, outputs),
    }
    if files.swapped_path is not None:
        imported["swapped_path"] = str(files.swapped_path)
    result = write_imported(run_config, panel, items, records, imported, inputs, started, outdir, force)
    log.info(
        "imported ChatEval's verdicts on %d items from %s into %s", len(records), files.path, result.outdir
    )
    return result
