"""The record hands its readers today's shape: an earlier release's metrics.json with what that
release did not record filled in as today's types say (None: not measured), each measure's
section validated by the measure's own type, and a copy of a run keeping its release's files as
written (read back through the same migrations)."""

import json
import shutil
from pathlib import Path

import pytest

from chateval.errors import DataError
from chateval.record.files import RunFolder
from chateval.record.migrations import metrics_as_today
from chateval.run.finished import load_finished_run, measure_sections
from chateval.schema.diagnostics import ParrotingSummary
from chateval.schema.systems import PERCENTILE_BOOTSTRAP
from tests.support.helpers import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "run_folders"
FAIREVAL_SYSTEMS = ROOT / "docs" / "results" / "faireval_systems"


def test_an_earlier_systems_section_reads_in_todays_shape() -> None:
    raw = json.loads((FIXTURES / "systems" / "metrics.json").read_text())["systems"]
    assert "resolved" not in raw["leaderboard"] and "calibrated_leaderboard" not in raw
    run = load_finished_run(FIXTURES / "systems")
    assert run.metrics is not None and run.task == "pairwise"
    systems = run.metrics["systems"]
    assert systems["task"] == "pairwise"
    # Its release named no resolved differences, no left-out pairs and no calibrated board.
    board = systems["leaderboard"]
    assert board is not None and board["resolved"] is None and board["resolved_alpha"] == 0.05
    assert systems["calibrated_left_out"] == []
    assert systems["calibrated_leaderboard"] is None and systems["calibrated_leaderboard_error"] is None
    # Its intervals were a percentile bootstrap and said no method: they read back naming it.
    assert (
        "interval_method" not in raw["leaderboard"]
        and "method" not in raw["win_rates"]["pairs"][0]["win_rate"]
    )
    assert board["interval_method"] == PERCENTILE_BOOTSTRAP
    rates = [row["win_rate"] for row in systems["win_rates"]["pairs"] + systems["win_rates"]["overall"]]
    assert rates and all(rate.get("method") == PERCENTILE_BOOTSTRAP for rate in rates)


def test_what_an_earlier_release_did_not_measure_reads_as_none() -> None:
    measured = {
        "utterances": 10,
        "echoing": 1,
        "echo_share": 0.1,
        "verdicts_that_saw_one": 0,
        "copied": 0,
        "copy_share": None,
    }
    old = {"items": 3, "parroting": dict(measured), "per_model": {"m": {"parroting": dict(measured)}}}
    today = metrics_as_today(old, "pairwise")
    model = today["per_model"]["m"]
    for summary in (today["parroting"], model["parroting"]):
        assert set(summary) == set(ParrotingSummary.__annotations__)
        assert {k: v for k, v in summary.items() if k not in measured} == dict.fromkeys(
            set(summary) - set(measured)
        )
    assert [model[key] for key in ("cut_off", "empty_assessments", "ceiling")] == [None, None, None]


def _faireval_systems(folder: Path, edit: dict[str, object]) -> Path:
    shutil.copytree(FAIREVAL_SYSTEMS, folder)
    metrics = json.loads((folder / "metrics.json").read_text())
    metrics["measures"] |= edit
    (folder / "metrics.json").write_text(json.dumps(metrics))
    return folder


def test_a_measure_section_is_validated_by_its_measure_type(tmp_path: Path) -> None:
    assert {"judgebench", "categories", "unanimity"} <= set(measure_sections())
    judgebench = json.loads((FAIREVAL_SYSTEMS / "metrics.json").read_text())["measures"]["judgebench"]
    folder = _faireval_systems(tmp_path / "run", {"judgebench": judgebench | {"pairs": "ten"}})
    wrong = r"metrics\.json: field measures\.judgebench\.pairs: .*chateval rescore"
    with pytest.raises(DataError, match=wrong):
        load_finished_run(folder)


def test_a_section_no_installed_measure_knows_is_read_as_written(tmp_path: Path) -> None:
    recorded = {"anything": [1, "two"]}
    run = load_finished_run(_faireval_systems(tmp_path / "run", {"from_another_package": recorded}))
    assert run.metrics is not None and run.metrics["measures"]["from_another_package"] == recorded


def test_a_copy_of_a_run_keeps_its_releases_files_as_written(tmp_path: Path) -> None:
    source, copy = RunFolder(FIXTURES / "format_2"), RunFolder(tmp_path / "copy")
    copy.create()
    source.copy_as_written(copy, "copy")
    assert json.loads(copy.info.read_text()) == json.loads(source.info.read_text()) | {"name": "copy"}
    kept = source.transcripts_file()
    assert kept is not None and (copy.path / kept.name).read_bytes() == kept.read_bytes()
    assert not copy.roster.exists()  # format 2 kept none: a reader rebuilds it, as for the source
