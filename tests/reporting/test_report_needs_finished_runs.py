"""``chateval report`` of a folder it cannot report as a run: one line naming the folder and
what to do, exit code 2, no report written. A finished run without metrics.json (a copy made
without it, a file deleted) would otherwise show every figure as "-"; a folder whose run has
not finished (no run.json) says how to finish it."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from chateval.cli import app
from tests.support.helpers import ROOT

RESULTS = ROOT / "docs" / "results"


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    """Two finished runs of the same data, the second without its metrics.json."""
    scored = shutil.copytree(RESULTS / "faireval_single", tmp_path / "scored")
    unscored = shutil.copytree(RESULTS / "faireval_chateval", tmp_path / "unscored")
    (unscored / "metrics.json").unlink()
    return scored, unscored


def report(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["report", *map(str, args)])
    return result.exit_code, result.output


def test_a_run_without_metrics_is_refused_with_the_rescore_to_run(
    runs: tuple[Path, Path], tmp_path: Path
) -> None:
    scored, unscored = runs
    out = tmp_path / "report"
    code, output = report(scored, unscored, "-o", out)
    assert code == 2
    assert output == (
        f"error: {unscored}: no metrics.json; `chateval rescore {unscored}` writes it from the verdicts "
        "(no model runs), then report again\n"
    )
    assert not out.exists()


def test_every_run_without_metrics_is_named_once(runs: tuple[Path, Path], tmp_path: Path) -> None:
    scored, unscored = runs
    (scored / "metrics.json").unlink()
    code, output = report(scored, unscored, "-o", tmp_path / "report")
    assert code == 2
    assert f"error: {scored}, {unscored}: no metrics.json; `chateval rescore {scored} {unscored}`" in output


def test_after_the_rescore_the_report_is_written(runs: tuple[Path, Path], tmp_path: Path) -> None:
    scored, unscored = runs
    assert CliRunner().invoke(app, ["rescore", str(unscored)]).exit_code == 0
    code, output = report(scored, unscored, "-o", tmp_path / "report")
    assert code == 0, output
    assert (tmp_path / "report" / "report.md").is_file()


def test_an_unfinished_run_says_how_to_finish_it(runs: tuple[Path, Path], tmp_path: Path) -> None:
    scored, unscored = runs
    (unscored / "run.json").unlink()
    code, output = report(scored, unscored, "-o", tmp_path / "report")
    assert code == 2
    assert output == (
        f"error: {unscored}: not a finished run folder (no run.json): its run was stopped or is still "
        "going; the same `chateval run` (or `chateval import`) command finishes it\n"
    )
    assert not (tmp_path / "report").exists()


def test_a_folder_that_is_not_a_run(tmp_path: Path) -> None:
    assert report(tmp_path) == (2, f"error: {tmp_path}: not a run folder (no run.json, no config.yaml)\n")
    missing = tmp_path / "nowhere"
    assert report(missing) == (2, f"error: {missing}: no such run folder\n")
