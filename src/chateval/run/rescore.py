"""Scoring a finished run folder again, without running a model: ``chateval rescore``.

``rescore`` recomputes metrics.json from verdicts.jsonl (today's statistics on an earlier
run); ``rescore_with_fewer_labels`` copies a run with only a share of its human labels kept
and scores the copy.
"""

from pathlib import Path
from typing import cast

import yaml

from chateval.errors import ConfigError
from chateval.evaluation.run_metrics import compute_metrics
from chateval.record.files import RunFolder
from chateval.record.roster import referee_models
from chateval.run.finished import panel_of, read_run_config
from chateval.run.statistics import statistics_settings
from chateval.schema.items import ItemRecord
from chateval.schema.run_info import RunInfo
from chateval.schema.run_metrics import RunMetrics


def rescore(outdir: Path | str) -> RunMetrics:
    """Recompute ``metrics.json`` of a run folder from its verdicts.jsonl (no model runs).

    A finished run is read in today's types whichever release wrote it. A folder without run.json
    (verdicts made elsewhere beside the config that names their panel, or a run killed after
    writing them) is scored from its config.yaml and verdicts.jsonl alone; its panel is the
    config's (``roster_as_today``)."""
    outdir = Path(outdir)
    files = RunFolder(outdir)
    files.require(files.config, files.verdicts, why="rescore needs a run folder's config and verdicts")
    with files.writing("chateval rescore"):  # not while a run or another rescore writes it
        return _rescore(files)


def _rescore(files: RunFolder) -> RunMetrics:
    """``rescore``, the folder's writer lock held."""
    # Not metrics.json: it is what a rescore replaces (a stale or broken one included).
    config = read_run_config(files)
    todays = panel_of(config)
    info = files.read_info(todays) if files.finished() else cast(RunInfo, {})
    roster = files.read_roster(info, todays)
    settings = statistics_settings(config, referee_models(roster), roster["summarizer_model"])
    metrics = compute_metrics(settings, files.read_verdicts())
    files.write_metrics(metrics)
    return metrics


def _unlabelled(item: ItemRecord) -> ItemRecord:
    """``item`` without its human label (pairwise) or scores (direct)."""
    return {**item, "label": None} if item["kind"] == "pairwise" else {**item, "scores": {}}


def rescore_with_fewer_labels(run: Path, into: Path, fraction: float) -> RunMetrics:
    """Copy the finished run ``run`` into ``into`` with the human labels of only a ``fraction``
    of its labelled items kept (the draw ``data.label_fraction`` makes when loading, with the
    run's ``data.seed``), and score the copy: what the run would report with that few labels.
    The verdicts are the run's own, so no model runs."""
    from chateval.data.labels import kept_positions

    if not 0.0 < fraction < 1.0:
        raise ConfigError(f"--label-fraction must lie between 0 and 1 (exclusive), got {fraction}")
    source = RunFolder(run)
    source.require(source.config, source.verdicts, source.info, why="rescoring needs a finished run folder")
    if into.resolve() == run.resolve():
        raise ConfigError(f"{into}: give another folder than the run's own")
    data = read_run_config(source).data
    records = source.read_verdicts()
    labelled = [bool(r.get("human_label") or r.get("human_scores")) for r in records]
    kept = kept_positions(labelled, fraction, data.seed)
    dropped = set()
    for i, record in enumerate(records):
        if labelled[i] and i not in kept:
            record["human_label" if "human_label" in record else "human_scores"] = None
            dropped.add(record["item_id"])
    # The copy's config.yaml is the run's as written, with the share of labels it keeps and its
    # own name (reports tell the copy from the run by name).
    tree = source.read_config_tree()
    tree.setdefault("data", {})["label_fraction"] = fraction * data.label_fraction
    tree["name"] = into.name
    copy = RunFolder(into)
    with copy.writing("chateval rescore"):
        copy.write_config(yaml.safe_dump(tree, sort_keys=False, allow_unicode=True))
        copy.write_verdicts(records)
        items = source.read_items()
        if items is not None:  # the items as debated, without the labels dropped
            copy.write_items(_unlabelled(item) if item["id"] in dropped else item for item in items)
        source.copy_as_written(copy, into.name)
        return _rescore(copy)
