"""``chateval import`` of direct scores (``task: direct``): another tool's score of each answer
(MT-Bench's single-answer grading) as a direct-task run folder, whose systems' statistics
(chateval.evaluation.systems.direct_systems) give each system's mean score with its interval,
and whose reports, exports and ``compare`` read it as any direct run's.

Everything is read and checked before anything is written (the config, every score record, the
data), as for imported verdicts (chateval.run.importing). The items are the answers scored: with
data, the items a chateval direct run of the same data scores (same ids, texts and human
scores), else ids, prompts and systems only. One referee, the imported judge, on one dimension.
"""

import logging
from pathlib import Path

from chateval.config.direct_imports import DirectImportConfig
from chateval.core.choices import RESPONSES_FORMATS
from chateval.core.items import DirectItem
from chateval.data.direct_judgments import Score, Scores, read_scores
from chateval.data.responses import build_items, response_id, responses_table
from chateval.errors import DataError
from chateval.judging.imported_scores import imported_score_record
from chateval.run.imported_folder import (
    ImportedPanel,
    ImportStart,
    import_inputs,
    imported_run_config,
    write_imported,
)
from chateval.run.runner import RunResult
from chateval.schema.run_info import ImportedInfo, ImportedLabels
from chateval.schema.verdicts import VerdictRecord

log = logging.getLogger(__name__)


def _data_items(config: DirectImportConfig, kept: list[Score]) -> dict[tuple[str, str], DirectItem]:
    """The data's items by (prompt, system), as a chateval direct run of it builds them; a
    DataError naming the record and field for a score whose answer the data lacks."""
    data = config.data
    if data is None:
        return {}
    responses = RESPONSES_FORMATS.get(data.format)(data)
    table, systems = responses_table(responses, data)
    items = {
        (item.group or "", item.system or ""): item
        for item in build_items(responses, data, "direct")
        if isinstance(item, DirectItem)
    }
    files = config.scores
    for score in kept:
        if score.prompt not in table:
            raise DataError(
                f"{score.where}: field {files.prompt!r}: prompt {score.prompt!r} is not in the data "
                f"{data.source}"
            )
        if score.system not in systems:
            raise DataError(
                f"{score.where}: field {files.system!r}: system {score.system!r} is not in the data "
                f"{data.source} (systems: {', '.join(systems)})"
            )
        if (score.prompt, score.system) not in items:
            raise DataError(
                f"{score.where}: field {files.system!r}: system {score.system!r} has no response to "
                f"prompt {score.prompt!r} in the data {data.source} (or the prompt was left out, "
                "lacking another system's response)"
            )
    return items


def _item(score: Score, items: dict[tuple[str, str], DirectItem]) -> DirectItem:
    """The answer ``score`` scored: the data's item, or one naming its prompt and system."""
    if items:
        return items[score.prompt, score.system]
    return DirectItem(
        response_id(score.prompt, score.system), "", "", group=score.prompt, system=score.system
    )


def _role_text(config: DirectImportConfig) -> str:
    return f"{config.referee.model}'s scores, imported from {config.scores.path} (no model ran here)"


def _labels(config: DirectImportConfig, items: list[DirectItem]) -> ImportedLabels | None:
    """Where the right answers came from: the data's human scores (``data.scores``), if any."""
    scored = sum(1 for item in items if item.scores)
    if config.data is None or not scored:
        return None
    return {"kind": "human", "path": config.data.source, "labelled": scored, "votes": scored, "unused": 0}


def _imported(
    config: DirectImportConfig, source: Path, scores: Scores, items: list[DirectItem], sha256: str, at: str
) -> ImportedInfo:
    return {
        "path": str(config.scores.path),
        "sha256": sha256,
        "config": str(source),
        "at": at,
        "records": scores.records,
        "kept": len(scores.kept),
        "skipped": dict(scores.skipped),
        "labels": _labels(config, items),
    }


def import_direct_run(
    config: DirectImportConfig, source: Path, outdir: Path | str | None = None, force: bool = False
) -> RunResult:
    """Import the scores ``config`` (read from ``source``) describes into the run folder
    ``outdir`` (default runs/NAME); nothing is written unless every record is good."""
    started = ImportStart.now()
    scores = read_scores(config)
    by_answer = _data_items(config, scores.kept)
    items = [_item(score, by_answer) for score in scores.kept]
    referee, dimension = config.referee.name, config.dimension.name
    records: list[VerdictRecord] = [
        imported_score_record(score, item, referee, dimension, config.data is not None)
        for score, item in zip(scores.kept, items, strict=True)
    ]
    # One referee, the imported judge, scoring one dimension, without soft verdicts.
    panel = ImportedPanel({referee: config.referee.model}, {referee: _role_text(config)})
    path = config.scores.path
    run_config = imported_run_config(
        source,
        config.name,
        "direct",
        panel,
        config.data,
        path,
        dimensions=[config.dimension.model_dump()],
        verdict={"soft": False},
    )
    inputs = import_inputs(config.data, [path])
    imported = _imported(config, source, scores, items, inputs[str(path)], started.at)
    result = write_imported(run_config, panel, items, records, imported, inputs, started, outdir, force)
    log.info("imported %d scored answers from %s into %s", len(records), path, result.outdir)
    return result
