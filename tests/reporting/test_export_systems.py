"""chateval export --what leaderboard|pairs: the systems a run judged as tables a paper can
take, each cell read from the run's metrics.json; CSV, JSON and Parquet hold the same rows."""

import csv
import io
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.reporting.export_systems import leaderboard_rows, pair_rows
from chateval.run.runner import run
from chateval.schema.run_metrics import DirectSystemsMetrics
from tests.support.helpers import export_stdout, tiny_config
from tests.support.scripted import soft_checksum_referee

runner = CliRunner()


def _metrics(folder: Path) -> dict[str, Any]:
    metrics: dict[str, Any] = json.loads((folder / "metrics.json").read_text())
    return metrics


@pytest.mark.slow  # on a scripted run; the direct rows' unit test stays in the fast tier
def test_the_leaderboard_has_a_row_per_system_read_from_metrics(systems_run: Path) -> None:
    section = _metrics(systems_run)["systems"]
    rows = json.loads(export_stdout(systems_run, "--what", "leaderboard", "--format", "json"))
    board, controlled = section["leaderboard"], section["length_controlled"]
    assert [r["system"] for r in rows] == [r["system"] for r in board["rows"]]
    overall = {r["system"]: r for r in section["win_rates"]["overall"]}
    for row, plain in zip(rows, board["rows"], strict=True):
        assert (row["rank"], row["rating"]) == (plain["rank"], plain["rating"])
        assert [row["rating_low"], row["rating_high"]] == plain["ci95"]
        assert row["anchor"] == (plain["system"] == board["anchor"])
        lc = next(r for r in controlled["rows"] if r["system"] == row["system"])
        assert (row["lc_rank"], row["lc_rating"]) == (lc["rank"], lc["rating"])
        field = overall[row["system"]]
        assert (row["comparisons"], row["wins"], row["ties"], row["losses"]) == (
            field["n"],
            field["wins"],
            field["ties"],
            field["losses"],
        )
        assert row["win_rate"] == field["win_rate"]["value"]
        assert [row["win_rate_low"], row["win_rate_high"]] == field["win_rate"]["ci95"]
        assert row["mean_words"] == plain["mean_length"]
        above = [lower for higher, lower in board["resolved"] if higher == row["system"]]
        assert row["resolved_above"] == "; ".join(above)
        # No human labels in this run: no calibrated figures, said as nulls.
        assert row["calibrated_rating"] is None and row["labelled"] is None


@pytest.mark.slow  # on a scripted run; the direct rows' unit test stays in the fast tier
def test_pairs_have_a_row_per_pair_of_systems(systems_run: Path) -> None:
    pairs = _metrics(systems_run)["systems"]["win_rates"]["pairs"]
    rows = list(csv.DictReader(io.StringIO(export_stdout(systems_run, "--what", "pairs"))))
    assert [(r["system_a"], r["system_b"]) for r in rows] == [(p["system_a"], p["system_b"]) for p in pairs]
    for row, pair in zip(rows, pairs, strict=True):
        assert int(row["comparisons"]) == pair["n"] and int(row["wins"]) == pair["wins"]
        assert float(row["win_rate"]) == pytest.approx(pair["win_rate"]["value"])
        assert float(row["soft_win_rate_high"]) == pytest.approx(pair["soft_win_rate"]["ci95"][1])
        assert row["calibrated_win_rate"] == ""  # null: no labels


@pytest.mark.slow  # on a scripted run; the direct rows' unit test stays in the fast tier
def test_csv_json_and_parquet_hold_the_same_rows(systems_run: Path, tmp_path: Path) -> None:
    as_json = json.loads(export_stdout(systems_run, "--what", "leaderboard", "--format", "json"))
    said = export_stdout(systems_run, "--what", "leaderboard", "-o", tmp_path / "board.parquet")
    assert f"exported {len(as_json)} rows (leaderboard, parquet)" in said
    assert pq.read_table(tmp_path / "board.parquet").to_pylist() == as_json
    as_csv = list(csv.DictReader(io.StringIO(export_stdout(systems_run, "--what", "leaderboard"))))
    assert list(as_csv[0]) == list(as_json[0])
    assert [r["system"] for r in as_csv] == [r["system"] for r in as_json]
    # The comparisons table writes to Parquet too, one column per CSV column.
    export_stdout(systems_run, "-o", tmp_path / "comparisons.parquet")
    header = next(csv.reader(io.StringIO(export_stdout(systems_run))))
    assert pq.read_table(tmp_path / "comparisons.parquet").column_names == header


def test_a_direct_runs_leaderboard_and_pairs() -> None:
    interval = {"value": 3.5, "ci95": [3.0, 4.0]}
    section: DirectSystemsMetrics = {
        "task": "direct",
        "responses": 4,
        "unscored": 0,
        "scores": {
            "systems": ["x", "y"],
            "dimensions": ["fluency"],
            "prompts": 2,
            "resamples": 1000,
            "means": [
                {"system": "x", "dimension": "fluency", "n": 2, "mean": interval},
                {"system": "y", "dimension": "fluency", "n": 2, "mean": {"value": 2.0, "ci95": [1.5, 2.5]}},
            ],
            "differences": [
                {"system_a": "x", "system_b": "y", "dimension": "fluency", "n": 2, "difference": interval}
            ],
        },
        "calibrated": [],
    }
    assert leaderboard_rows(section) == [
        {
            "system": "x",
            "fluency_n": 2,
            "fluency": 3.5,
            "fluency_low": 3.0,
            "fluency_high": 4.0,
            "fluency_calibrated": None,
            "fluency_calibrated_low": None,
            "fluency_calibrated_high": None,
            "fluency_labelled": None,
        },
        {
            "system": "y",
            "fluency_n": 2,
            "fluency": 2.0,
            "fluency_low": 1.5,
            "fluency_high": 2.5,
            "fluency_calibrated": None,
            "fluency_calibrated_low": None,
            "fluency_calibrated_high": None,
            "fluency_labelled": None,
        },
    ]
    assert pair_rows(section) == [
        {
            "system_a": "x",
            "system_b": "y",
            "dimension": "fluency",
            "n": 2,
            "difference": 3.5,
            "difference_low": 3.0,
            "difference_high": 4.0,
        }
    ]


@pytest.mark.slow  # on a scripted run; the direct rows' unit test stays in the fast tier
def test_a_run_without_systems_and_bad_options_are_refused(systems_run: Path, tmp_path: Path) -> None:
    def refused(*args: str | Path) -> str:
        result = runner.invoke(app, ["export", *map(str, args)])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        return " ".join(result.output.split())

    assert "--what 'ranking': unknown table; use one of comparisons, pairs, leaderboard" in refused(
        systems_run, "--what", "ranking"
    )
    assert "Parquet is a binary format: give a file to write it to" in refused(
        systems_run, "--what", "pairs", "--format", "parquet"
    )
    plain = tmp_path / "plain"
    run(tiny_config(), plain, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)})
    assert "the run judged no named systems (its items name none)" in refused(plain, "--what", "leaderboard")
    assert not (tmp_path / "out.csv").exists()


def test_a_categories_table_whose_rows_differ_writes_every_column(tmp_path: Path) -> None:
    """One category with systems, one without: CSV and Parquet take every row's columns."""
    from chateval.reporting.export import Export, render, write
    from chateval.reporting.export_systems import category_rows

    rate = {"value": 0.5, "ci95": [0.2, 0.8]}
    with_systems = {
        "category": "math",
        "items": 2,
        "agreement": None,
        "systems": {"rows": [{"system": "x", "n": 2, "wins": 1, "ties": 0, "losses": 1, "win_rate": rate}]},
    }
    section = {
        "categories": [{"category": "art", "items": 1, "agreement": None, "systems": None}, with_systems]
    }
    rows = category_rows(section, "pairwise")
    export = Export(tmp_path, "pairwise", (), [dict(row) for row in rows], True, "categories")
    header = next(csv.reader(io.StringIO(render(export, "csv"))))
    assert "system" in header and "win_rate_high" in header and header[0] == "category"
    write(export, "parquet", tmp_path / "c.parquet")
    table = pq.read_table(tmp_path / "c.parquet")
    assert table.column_names == header and table.to_pylist()[0]["system"] is None
