"""The one view of a run's metrics (chateval.reporting.metrics_view): the task comes from the
run, not from metrics.json's keys; metrics of earlier releases read in today's shape; the rows
it gives the console summary, report.md and the HTML report match metrics.json."""

import json
import shutil
from pathlib import Path
from typing import cast

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.config.files import load_config
from chateval.engines.models import DEFAULT_MODEL
from chateval.evaluation.diagnostics.model_rows import per_model_rows
from chateval.reporting.metrics_view import (
    CorrelationRow,
    DirectView,
    PairwiseView,
    metrics_view,
    run_view,
)
from chateval.run.finished import FinishedRun, load_finished_run
from chateval.run.runner import run
from chateval.schema.run_info import RunInfo
from tests.support.helpers import CONFIGS_DIR
from tests.support.scripted import (
    hostile_direct_referee,
    steady_and_swayed_backends,
    steady_and_swayed_config,
)


@pytest.fixture(scope="module")
def pairwise_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models, opinion probes, human labels: baselines and the blind vote are recorded."""
    folder = tmp_path_factory.mktemp("pairwise")
    run(steady_and_swayed_config(opinion_probes=True), folder, backends=steady_and_swayed_backends())
    return folder


@pytest.fixture(scope="module")
def direct_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("direct")
    config = load_config(CONFIGS_DIR / "quickstart_direct.yaml")
    run(config, folder, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, hostile_direct_referee)})
    return folder


def _older(folder: Path, into: Path, drop: tuple[str, ...]) -> FinishedRun:
    """A copy of the run whose metrics.json lacks ``drop``, as a release before them wrote it."""
    shutil.copytree(folder, into)
    path = into / "metrics.json"
    metrics = json.loads(path.read_text())
    path.write_text(json.dumps({k: v for k, v in metrics.items() if k not in drop}))
    return load_finished_run(into)


def test_the_task_comes_from_the_run_not_from_the_metrics_keys(pairwise_run: Path) -> None:
    # A pairwise run without human labels has no accuracy anywhere: it is still pairwise.
    unlabelled = {
        "items": 2,
        "items_scored": 2,
        "aggregations": {"hard": {"items_scored": 2, "tie_share": 0.5}},
    }
    view = metrics_view("pairwise", unlabelled)
    assert isinstance(view, PairwiseView)
    [hard] = view.aggregations
    assert (hard.aggregation, hard.items_scored, hard.tie_share, hard.panel) == ("hard", 2, 0.5, None)
    assert isinstance(metrics_view("direct", unlabelled), DirectView)
    finished = load_finished_run(pairwise_run)
    assert finished.task == "pairwise" and isinstance(run_view(finished), PairwiseView)
    # run.json without its task (an edited file): the config's.
    info = cast(RunInfo, {k: v for k, v in finished.info.items() if k != "task"})
    direct = load_config(CONFIGS_DIR / "quickstart_direct.yaml")
    older = FinishedRun(finished.folder, direct, info, finished.roster, finished.metrics)
    assert older.task == "direct" and isinstance(run_view(older), DirectView)


def test_metrics_of_earlier_releases_fall_back_once(
    pairwise_run: Path, direct_run: Path, tmp_path: Path
) -> None:
    """Before soft verdicts: the hard metrics at the top level, no aggregations; the reader
    (chateval.record.migrations) gives the view today's shape."""
    drop = (
        "aggregations",
        "soft_verdicts",
        "soft_vs_hard",
        "baselines",
        "parroting",
        "cut_off",
        "empty_assessments",
        "ceiling",
    )
    for folder, name in ((pairwise_run, "pairwise"), (direct_run, "direct")):
        current = run_view(load_finished_run(folder))
        view = run_view(_older(folder, tmp_path / name, drop))
        [hard] = view.aggregations
        assert hard.aggregation == "hard" and hard.panel == current.metrics.get("panel")
        assert hard.items_scored == current.items_scored
        assert not view.has_soft_verdicts and not view.has_soft and view.soft_status is None
        assert "baselines" not in view.metrics and not view.diagnosed and view.degenerate_reasons() == []
    older = run_view(_older(pairwise_run, tmp_path / "no_counts", (*drop, "items_scored")))
    assert isinstance(older, PairwiseView) and older.aggregations[0].items_scored is None
    assert older.aggregations[0].tie_share is None  # not recorded, not 0
    # No metrics.json at all: nothing recorded, nothing raised.
    empty = metrics_view("pairwise", None)
    assert not empty.recorded and empty.items is None and empty.aggregations == []


def test_pairwise_rows_match_metrics_json(pairwise_run: Path) -> None:
    finished = load_finished_run(pairwise_run)
    metrics = json.loads((pairwise_run / "metrics.json").read_text())
    view = run_view(finished)
    assert isinstance(view, PairwiseView) and view.recorded
    hard = metrics["aggregations"]["hard"]
    assert [row.aggregation for row in view.aggregations] == list(metrics["aggregations"])
    assert view.aggregations[0].tie_share == hard["tie_share"]
    assert view.aggregations[0].accuracy == hard["panel"]["accuracy"]
    baselines = metrics["baselines"]
    majority = baselines["majority"]["label"]
    assert [(r.name, r.phrase, r.expected) for r in view.baseline_rows] == [
        ('always "A"', 'always "A"', False),
        (f"majority label ({majority})", f"the majority label ({majority})", False),
        ("random label", "a random label (expected)", True),
    ]
    assert [r.accuracy for r in view.baseline_rows] == [
        baselines[k]["accuracy"] for k in ("always_A", "majority", "random")
    ]
    comparison = metrics["debate_effect"]["comparison"]
    assert [(r.side, r.n, r.first, r.second) for r in view.blind_final_rows] == [
        (side, comparison["n"], comparison["accuracy"][side], comparison["kappa"][side])
        for side in ("blind", "final")
    ]
    rows = per_model_rows(metrics["per_model"])
    assert [row.model for row in rows] == list(metrics["per_model"]) == ["steady", "swayed"]
    assert rows[0].vs_humans.endswith(" acc") and not rows[0].with_panel.endswith("gap")


def test_direct_rows_match_metrics_json(direct_run: Path) -> None:
    metrics = json.loads((direct_run / "metrics.json").read_text())
    view = run_view(load_finished_run(direct_run))
    assert isinstance(view, DirectView)
    [hard] = view.aggregations  # the scripted backend gives no probabilities: no soft verdicts
    panel = metrics["panel"]
    # The scripted referee's engagingness and naturalness never vary: the paper's average is
    # undefined, and the average of the defined dimensions follows it, named by them.
    defined = "average of the defined (coherence, groundedness)"
    assert panel["average_defined"]["dimensions"] == ["coherence", "groundedness"]
    assert [row.name for row in hard.correlations] == [*panel["dimensions"], "average", defined]
    assert hard.average_defined is not None and hard.average_defined.covers == ("coherence", "groundedness")
    first = next(iter(panel["dimensions"]))
    assert hard.correlations[0] == CorrelationRow(
        first,
        panel["dimensions"][first]["n"],
        *(panel["dimensions"][first][k] for k in ("spearman", "kendall")),
    )
    assert hard.average.spearman == panel["average"].get("spearman")
    assert not view.has_soft and view.soft_status == metrics["soft_verdicts"]
    length = metrics["baselines"]["response_length"]
    assert [row.name for row in view.length_rows] == [*length["dimensions"], "average"]  # all defined
    assert view.blind_final_rows == []  # no opinion probes
    [row] = per_model_rows(metrics["per_model"])
    assert row.with_panel.endswith(" gap") and not row.vs_humans.endswith(" acc")
