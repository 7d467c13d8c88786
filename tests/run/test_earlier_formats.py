"""Run folders written by earlier releases (tests/fixtures/run_folders, copied from docs/results in
this repository's history) read through today's types, rescore, and report."""

import shutil
from pathlib import Path

import pytest

from chateval.config.run import RunConfig
from chateval.record.migrations import FORMAT_VERSION
from chateval.reporting.html import write_html_report
from chateval.reporting.markdown import write_report
from chateval.reporting.metrics_view import run_view
from chateval.run.finished import load_finished_run
from chateval.run.rescore import rescore
from tests.support.helpers import assert_same_statistics

FIXTURES = Path(__file__).parent.parent / "fixtures" / "run_folders"
FOLDERS = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir())
# The format each fixture was written in (run.json's format_version; 1 where it has none).
WRITTEN_IN = {
    "diagnostics_direct": 1,
    "first_release": 1,
    "format_2": 2,
    "format_3": 3,
    "soft_verdicts": 1,
    "systems": 1,
}


@pytest.fixture(params=FOLDERS)
def earlier(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    folder = tmp_path / request.param
    shutil.copytree(FIXTURES / request.param, folder)
    return folder


def test_every_format_is_kept_as_a_fixture() -> None:
    assert sorted(WRITTEN_IN) == FOLDERS
    # A format replaced by a newer one keeps a fixture (docs/architecture.md).
    assert set(range(1, FORMAT_VERSION)) <= set(WRITTEN_IN.values())


def test_an_earlier_folder_reads_in_todays_types(earlier: Path) -> None:
    run = load_finished_run(earlier)
    assert isinstance(run.config, RunConfig) and run.task == run.config.task
    assert run.format_version == WRITTEN_IN[earlier.name] < FORMAT_VERSION
    info = run.info
    assert isinstance(info["batches"], int) and isinstance(info["engine_steps"], int)
    assert "backend_calls" not in info
    for counts in info["per_model"].values():
        assert set(counts) == {
            "batches",
            "engine_steps",
            "requests",
            "prompt_tokens",
            "generated_tokens",
            "cached_prompt_tokens",
        }
    # No referee -> model map in version 1: rebuilt from the config's panel.
    assert info["referees"] and set(info["referees"].values()) <= set(run.config.model_names())
    assert [r["name"] for r in run.roster["referees"]] == list(info["referees"])
    if run.format_version < 3:
        # No roster and no items before version 3: the roster rebuilt from the config, no items.
        assert run.roster["rebuilt"]
        assert run.items() is None and run.items_notice() is not None and not run.changed_inputs()
    else:
        # Its roster and items as written; its input files (in the checkout that wrote it) are gone.
        items = run.items()
        assert "rebuilt" not in run.roster and items is not None
        assert [item.id for item in items] == [record["item_id"] for record in run.verdicts()]
        assert run.items_notice() is None and not run.changed_inputs()
    assert run.metrics is not None and "hard" in run.metrics["aggregations"]
    assert len(run.verdicts()) in (8, 9, 12)
    view = run_view(run)
    assert view.aggregations[0].aggregation == "hard"


def test_the_first_release_counts_backend_calls_as_batches(tmp_path: Path) -> None:
    import json

    raw = json.loads((FIXTURES / "first_release" / "run.json").read_text())
    run = load_finished_run(FIXTURES / "first_release")
    assert run.info["batches"] == raw["backend_calls"]
    [(model, counts)] = run.info["per_model"].items()
    assert counts["generated_tokens"] == raw["per_model"][model]["completion_tokens"]
    # Before soft verdicts the hard agreement stood at the top level.
    assert "aggregations" not in json.loads((FIXTURES / "first_release" / "metrics.json").read_text())
    assert run.metrics is not None
    assert run.metrics["aggregations"]["hard"].get("panel") == run.metrics.get("panel")


@pytest.mark.slow  # over a second: the fast tier keeps under its 60 s
def test_an_earlier_folder_rescores_and_reports(earlier: Path) -> None:
    before = load_finished_run(earlier)
    metrics = rescore(earlier)
    assert metrics["items"] == len(before.verdicts())
    assert "aggregations" in metrics and metrics.get("per_model")
    after = load_finished_run(earlier)
    assert after.metrics is not None and after.metrics["items"] == metrics["items"]
    if before.task == "pairwise":
        labelled = [r for r in before.verdicts() if r.get("human_label")]
        hard = metrics["aggregations"]["hard"]
        assert hard["items_scored"] == len(before.verdicts())
        panel = hard.get("panel")
        assert panel is not None
        right = sum(r.get("label") == r["human_label"] for r in labelled)
        assert panel["accuracy"]["value"] == pytest.approx(right / len(labelled))
    report = write_report([earlier], earlier / "report")
    assert report.read_text(encoding="utf-8").count(before.name) >= 1
    # The HTML report too, where the folder kept no transcripts: verdicts without the talk.
    page = write_html_report([earlier], earlier / "html")
    assert before.name in page.read_text(encoding="utf-8")


def test_a_folder_of_a_newer_format_is_refused(tmp_path: Path) -> None:
    import json

    from chateval.errors import DataError

    folder = tmp_path / "newer"
    shutil.copytree(FIXTURES / "systems", folder)
    info = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps(info | {"format_version": FORMAT_VERSION + 1}))
    newer = rf"run.json: written in run folder format {FORMAT_VERSION + 1} by a newer chateval"
    with pytest.raises(DataError, match=newer):
        load_finished_run(folder)


DOCS_RESULTS = Path(__file__).parent.parent.parent / "docs" / "results"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(p.name for p in DOCS_RESULTS.iterdir() if (p / "run.json").is_file()))
def test_every_docs_results_folder_rescores_to_its_stored_agreement(name: str, tmp_path: Path) -> None:
    """Read through today's record, every published folder gives its stored numbers, all of
    them (the folders are rescored whenever the statistics change: docs/results/README.md)."""
    import json

    folder = tmp_path / name
    shutil.copytree(DOCS_RESULTS / name, folder)
    stored = json.loads((folder / "metrics.json").read_text())
    assert_same_statistics(json.loads(json.dumps(rescore(folder))), stored)
