"""Scoring a finished run folder again, without running a model: ``chateval rescore``.

``rescore`` recomputes metrics.json from verdicts.jsonl (today's statistics on an earlier
run); ``rescore_with_fewer_labels`` copies a run with only a share of its human labels kept
and scores the copy.
"""

from collections.abc import Sequence
from pathlib import Path
from typing import cast

from chateval.config.run import RunConfig
from chateval.core.file_access import file_mode, private_folder
from chateval.core.items import DirectItem
from chateval.core.schema.records import RunInfo, VerdictRecord
from chateval.debate.building import load_run_items
from chateval.errors import ChatEvalError, ConfigError
from chateval.evaluation.run_metrics import RunMetrics, compute_metrics
from chateval.run.folder import RunFolder, load_finished_run
from chateval.run.statistics import statistics_settings


def _add_response_words(config: RunConfig, records: Sequence[VerdictRecord]) -> None:
    """Give records of an earlier release their response's length (the length baseline) from
    the run's data file, when it can still be read here; otherwise leave them as they are."""
    try:
        items = {item.id: item for item in load_run_items(config)}
    except (ChatEvalError, OSError):
        return
    for record in records:
        item = items.get(record["item_id"])
        if isinstance(item, DirectItem):
            record["response_words"] = len(item.response.split())


def rescore(outdir: Path | str) -> RunMetrics:
    """Recompute ``metrics.json`` of a finished run from its verdicts.jsonl (no model runs)."""
    outdir = Path(outdir)
    files = RunFolder(outdir)
    files.require(files.config, files.verdicts, files.info, why="rescore needs a finished run folder")
    finished = load_finished_run(outdir)  # any release's folder, in today's types
    config = finished.config
    records = finished.verdicts()
    if config.task == "direct" and any("response_words" not in r for r in records):
        _add_response_words(config, records)
    info = finished.info
    settings = statistics_settings(config, info.get("referees"), info.get("summarizer_model"))
    metrics = compute_metrics(settings, records)
    files.write_metrics(metrics)
    return metrics


def rescore_with_fewer_labels(run: Path, into: Path, fraction: float) -> RunMetrics:
    """Copy the finished run ``run`` into ``into`` with the human labels of only a ``fraction``
    of its labelled items kept (the draw ``data.label_fraction`` makes when loading, with the
    run's ``data.seed``), and score the copy: what the run would report with that few labels.
    The verdicts are the run's own, so no model runs."""
    import shutil

    import yaml

    from chateval.data.labels import kept_positions

    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"--label-fraction must lie between 0 and 1 (exclusive), got {fraction}")
    source = RunFolder(run)
    source.require(source.config, source.verdicts, source.info, why="rescoring needs a finished run folder")
    if into.resolve() == run.resolve():
        raise ConfigError(f"{into}: give another folder than the run's own")
    tree = source.read_config_tree()
    data = tree.setdefault("data", {})
    already = float(data.get("label_fraction", 1.0))
    records = [record for _, record in source.read_verdicts()]
    labelled = [bool(r.get("human_label") or r.get("human_scores")) for r in records]
    kept = kept_positions(labelled, fraction, int(data.get("seed", 0)))
    for i, record in enumerate(records):
        if labelled[i] and i not in kept:
            record["human_label" if "human_label" in record else "human_scores"] = None
    data["label_fraction"] = fraction * already
    tree["name"] = into.name  # reports tell the copy from the run by name
    private_folder(into)
    copy = RunFolder(into)
    copy.write_config(yaml.safe_dump(tree, sort_keys=False, allow_unicode=True))
    copy.write_verdicts(cast(list[VerdictRecord], records))  # as the run wrote them
    transcripts = source.transcripts_file()
    if transcripts is not None:
        shutil.copyfile(transcripts, into / transcripts.name)
        (into / transcripts.name).chmod(file_mode())
    copy.write_info(cast(RunInfo, source.read_info() | {"name": into.name}))
    return rescore(into)
