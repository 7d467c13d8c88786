"""``chateval report``: one command writes report.md (with its PNGs) and report.html, by
default into the run's own ``report/`` folder (several runs: ``./report``); runs one page
cannot put side by side get report.md alone and the reason; ``--html``, an earlier release's
switch, is accepted and changes nothing. A tiny scripted run, and a committed direct one."""

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.helpers import prompt_dependent, tiny_config

DIRECT = Path(__file__).parents[1] / "fixtures" / "run_folders" / "diagnostics_direct"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A pairwise run of 2 items, kept apart from the tests' own copies, and a direct run (a
    committed fixture, only read)."""
    folder = tmp_path_factory.mktemp("one_report") / "pairwise"
    run(tiny_config(), folder, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    return {"pairwise": folder, "direct": DIRECT}


def _copy(runs: dict[str, Path], name: str, into: Path) -> Path:
    return Path(shutil.copytree(runs[name], into / name))


def _report(*args: str | Path) -> Result:
    return CliRunner().invoke(app, ["report", *map(str, args)])


def test_one_run_gets_both_files_in_its_own_report_folder(runs: dict[str, Path], tmp_path: Path) -> None:
    folder = _copy(runs, "pairwise", tmp_path)
    result = _report(folder)
    assert result.exit_code == 0, result.output
    out = folder / "report"
    assert result.stdout == f"report: {out / 'report.md'}\nreport: {out / 'report.html'}\n"
    assert (out / "report.md").is_file() and (out / "report.html").is_file()


def test_several_runs_go_to_report_in_the_working_folder(
    runs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = _copy(runs, "pairwise", tmp_path / "a")
    second = _copy(runs, "pairwise", tmp_path / "b")
    monkeypatch.chdir(tmp_path)
    result = _report(first, second)
    assert result.exit_code == 0, result.output
    assert result.stdout == "report: report/report.md\nreport: report/report.html\n"
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert page.count("<th>test</th>") >= 2  # both runs side by side (tiny_config's name)
    assert not (first / "report").exists() and not (second / "report").exists()


def test_runs_one_page_cannot_hold_get_report_md_alone_and_the_reason(
    runs: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "both"
    out.mkdir()
    (out / "report.html").write_text("an earlier report of other runs")
    result = _report(runs["pairwise"], runs["direct"], "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stdout == f"report: {out / 'report.md'}\n"
    assert result.stderr == (
        f"note: report.html puts runs of one task side by side; got {runs['pairwise']} (pairwise), "
        f"{runs['direct']} (direct): no report.html written; `chateval report RUN` writes each run's\n"
    )
    assert (out / "report.md").is_file() and not (out / "report.html").exists()


def test_html_is_accepted_and_changes_nothing(runs: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _report(runs["pairwise"], "--html", "-o", out)
    assert result.exit_code == 0, result.output
    assert result.stderr == "note: --html is no longer needed: report writes report.md and report.html\n"
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert "--html" not in CliRunner().invoke(app, ["report", "--help"]).output  # not offered any more
