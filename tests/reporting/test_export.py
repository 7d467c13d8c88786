"""chateval export: one row per comparison (CSV or JSONL) from a run folder, scripted runs only."""

import csv
import io
import json
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.engines.models import DEFAULT_MODEL
from chateval.reporting.export import choose_format, export_run
from chateval.run.runner import run
from tests.support.helpers import (
    SAMPLE_SYSTEMS,
    asks_for_scores,
    direct_responses_config,
    export_stdout,
    prompt_text,
    read_jsonl,
    speaker_of,
    tiny_config,
)

SAMPLE = SAMPLE_SYSTEMS
REFEREES = ["Critic", "Everyday Reader"]
REFEREE_FIELDS = [
    "score_a",
    "score_b",
    "soft_score_a",
    "soft_score_b",
    "winner",
    "excluded",
    "cut_off",
    "copied_words",
    "copied_scores_from",
    "parse_error",
]
runner = CliRunner()


def csv_rows(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def jsonl_rows(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


# Win rates: wins, ties, losses and the win rate (ties half) of the first system of each pair
# (pairs in sorted order), from (system_a, system_b, label) decisions, one per item.
WinRates = dict[tuple[str, str], tuple[int, int, int, float]]


def win_rates(decisions: Iterable[tuple[str, str, str | None]]) -> WinRates:
    counts: dict[tuple[str, str], list[int]] = {}
    for a, b, label in decisions:
        if label is None:
            continue
        first, second = sorted((a, b))
        won = {"A": a, "B": b}.get(label)
        tally = counts.setdefault((first, second), [0, 0, 0])
        tally[0 if won == first else 2 if won == second else 1] += 1
    return {pair: (w, t, lost, (w + t / 2) / (w + t + lost)) for pair, (w, t, lost) in sorted(counts.items())}


# Pairwise with systems ---------------------------------------------------------------------


def test_csv_has_a_row_per_item_and_order_with_every_referee(systems_run: Path) -> None:
    records = read_jsonl(systems_run / "verdicts.jsonl")
    rows = csv_rows(export_stdout(systems_run))
    assert len(records) == 12 and len(rows) == 24
    header = list(rows[0])
    assert header[:5] == ["item_id", "prompt", "system_a", "system_b", "order"]
    assert header[5 : 5 + 2 * len(REFEREE_FIELDS)] == [f"{r}.{f}" for r in REFEREES for f in REFEREE_FIELDS]
    assert header[-11:] == [
        "order_label",
        "panel_label",
        "panel_score_a",
        "panel_score_b",
        "panel_soft_label",
        "panel_soft_score_a",
        "panel_soft_score_b",
        "human_label",
        "words_a",
        "words_b",
        "truncated",
    ]
    for record, pair in zip(records, zip(rows[::2], rows[1::2], strict=True), strict=True):
        assert [row["order"] for row in pair] == ["original", "swapped"]
        for row, order in zip(pair, record["orders"], strict=True):
            assert (row["item_id"], row["prompt"], row["system_a"], row["system_b"]) == (
                record["item_id"],
                record["prompt"],
                record["system_a"],
                record["system_b"],
            )
            for ref in order["referees"]:
                for field in ("score_a", "score_b", "soft_score_a", "soft_score_b", "winner"):
                    assert row[f"{ref['agent']}.{field}"] == str(ref[field])
            assert row["panel_label"] == record["label"] and row["panel_soft_label"] == record["soft_label"]
            assert float(row["panel_soft_score_a"]) == record["soft_score_a"]
            assert (row["words_a"], row["words_b"]) == (str(record["words_a"]), str(record["words_b"]))
            assert row["human_label"] == "" and row["truncated"] == "False"


def test_jsonl_nests_the_referees_and_matches_the_csv(systems_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    result = runner.invoke(app, ["export", str(systems_run), "-o", str(out)])  # format from the suffix
    assert result.exit_code == 0 and "exported 24 rows (comparisons, jsonl)" in result.stdout
    rows = jsonl_rows(out.read_text(encoding="utf-8"))
    assert [r["referee"] for r in rows[0]["referees"]] == REFEREES
    assert list(rows[0]["referees"][0]) == ["referee", *REFEREE_FIELDS]
    flat = csv_rows(export_stdout(systems_run, "--format", "csv"))
    for row, cells in zip(rows, flat, strict=True):
        for ref in row["referees"]:
            for field in REFEREE_FIELDS:
                value = ref[field]
                assert cells[f"{ref['referee']}.{field}"] == ("" if value is None else str(value))
        assert cells["panel_label"] == row["panel_label"] and cells["order"] == row["order"]


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_round_trip_the_exported_rows_recompute_the_win_rates(systems_run: Path, fmt: str) -> None:
    records = read_jsonl(systems_run / "verdicts.jsonl")
    text = export_stdout(systems_run, "--format", fmt)
    rows: list[dict[str, Any]] = csv_rows(text) if fmt == "csv" else jsonl_rows(text)
    firsts = [r for r in rows if r["order"] == "original"]  # each item once
    deduped = list({r["item_id"]: r for r in rows}.values())
    for kind in ("label", "soft_label"):
        direct = win_rates((r["system_a"], r["system_b"], r[kind]) for r in records)
        for chosen in (firsts, deduped):
            assert win_rates((r["system_a"], r["system_b"], r[f"panel_{kind}"]) for r in chosen) == direct
        assert set(direct) == {("brief", "careful"), ("brief", "rambling"), ("careful", "rambling")}
        assert sum(w + t + lost for w, t, lost, _ in direct.values()) == 12
    decided = win_rates((r["system_a"], r["system_b"], r["label"]) for r in records)
    assert any(w + lost for w, _, lost, _ in decided.values())  # not all ties: the test can fail


# Scores in the item's frame, and the flags ----------------------------------------------------


def first_shown_wins(request: GenerationRequest) -> str | GenerationResult:
    """Every referee scores the answer shown first 8 and the other 3, with the same words; the
    Critic's talk stops at its token cap; the Everyday Reader's scores of q02 do not parse."""
    speaker = speaker_of(request)
    if asks_for_scores(request):
        if speaker == "Everyday Reader" and "boiling point of water" in prompt_text(request):
            return "no scores here"
        return "\nAssistant 1: 8\nAssistant 2: 3"
    text = "I think the first answer is clearly more complete and more useful than the second one."
    finish = "length" if speaker == "Critic" else "stop"
    return GenerationResult(text, 10, len(text.split()), finish)


def test_scores_are_in_the_item_frame_and_flags_are_set(tmp_path: Path) -> None:
    run(tiny_config(), tmp_path, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, first_shown_wins)})
    rows = jsonl_rows(export_stdout(tmp_path, "--format", "jsonl"))
    assert [(r["item_id"], r["order"]) for r in rows] == [
        ("q01", "original"),
        ("q01", "swapped"),
        ("q02", "original"),
        ("q02", "swapped"),
    ]
    original, swapped = rows[0], rows[1]
    critic, reader = original["referees"]
    assert (critic["score_a"], critic["score_b"], critic["winner"]) == (8, 3, "A")
    assert [(r["score_a"], r["score_b"], r["winner"]) for r in swapped["referees"]] == [(3, 8, "B")] * 2
    assert (original["order_label"], swapped["order_label"]) == ("A", "B")
    assert (original["panel_label"], original["panel_score_a"], original["panel_score_b"]) == ("tie", 22, 22)
    assert swapped["panel_label"] == "tie" and original["human_label"] == "A"
    assert (critic["cut_off"], reader["cut_off"]) == (True, False)
    assert reader["copied_words"] is True and reader["copied_scores_from"] == "Critic"
    assert critic["copied_scores_from"] is None and critic["parse_error"] is None
    assert critic["soft_score_a"] is None and original["panel_soft_label"] is None  # no probabilities
    assert original["system_a"] is None and original["words_a"] is None
    for row in rows[2:]:  # q02: the reader's verdicts failed; the Critic alone decides
        critic, reader = row["referees"]
        assert reader["parse_error"] and reader["score_a"] is None and reader["excluded"] is True
        assert critic["excluded"] is False and critic["parse_error"] is None
        assert (row["panel_score_a"], row["panel_score_b"], row["panel_label"]) == (11, 11, "tie")


# Runs without systems, and direct runs -----------------------------------------------------


def test_a_run_without_systems_exports_with_empty_system_columns(scripted_reference: Path) -> None:
    records = read_jsonl(scripted_reference / "verdicts.jsonl")
    rows = csv_rows(export_stdout(scripted_reference))
    assert len(rows) == 2 * len(records) == 24
    for column in ("prompt", "system_a", "system_b", "words_a", "words_b"):
        assert {row[column] for row in rows} == {""}
    assert [row["human_label"] for row in rows[::2]] == [r["human_label"] for r in records]
    assert [row["panel_label"] for row in rows[::2]] == [r["label"] for r in records]


def test_a_run_without_position_calibration_has_one_row_per_item(tmp_path: Path) -> None:
    config = tiny_config(position_calibration=False)
    run(config, tmp_path, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, first_shown_wins)})
    rows = jsonl_rows(export_stdout(tmp_path, "--format", "jsonl"))
    assert [(r["order"], r["panel_label"], r["panel_score_a"]) for r in rows] == [("original", "A", None)] * 2


def test_a_direct_run_has_a_row_per_response(tmp_path: Path) -> None:
    data = tmp_path / "rows.jsonl"
    responses = [
        {
            "prompt": p,
            "question": f"question {p}",
            "system": s,
            "response": f"{s} says {p}",
            "scores": {"fluency": k},
        }
        for p in ("p1", "p2")
        for s, k in (("one", 1), ("two", 3))
    ]
    config = direct_responses_config(data, responses)

    def fluency(request: GenerationRequest) -> str:
        if not asks_for_scores(request):
            return "ok"
        return "\nFluency: 3" if speaker_of(request) == "Critic" else "\nFluency: 2"

    out = tmp_path / "run"
    run(config, out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, fluency)})
    rows = csv_rows(export_stdout(out))
    per_referee = ["scores.fluency", "soft_scores.fluency", *REFEREE_FIELDS[-4:]]
    assert list(rows[0]) == [
        "item_id",
        "prompt",
        "system",
        *[f"{r}.{f}" for r in REFEREES for f in per_referee],
        "panel_scores.fluency",
        "panel_soft_scores.fluency",
        "human_scores.fluency",
        "response_words",
        "truncated",
    ]
    assert [(r["item_id"], r["prompt"], r["system"], r["human_scores.fluency"]) for r in rows] == [
        ("p1:one", "p1", "one", "1.0"),
        ("p1:two", "p1", "two", "3.0"),
        ("p2:one", "p2", "one", "1.0"),
        ("p2:two", "p2", "two", "3.0"),
    ]
    scores = {(r["Critic.scores.fluency"], r["Everyday Reader.scores.fluency"]) for r in rows}
    assert scores == {("3", "2")} and {r["panel_scores.fluency"] for r in rows} == {"2.5"}
    assert {r["response_words"] for r in rows} == {"3"}
    nested = jsonl_rows(export_stdout(out, "--format", "jsonl"))[0]
    assert nested["referees"][0]["scores"] == {"fluency": 3} and nested["panel_scores"] == {"fluency": 2.5}


# Formats and errors ----------------------------------------------------------------------------


def test_the_format_comes_from_the_option_then_the_suffix_then_csv() -> None:
    assert choose_format(None, None) == "csv"
    assert choose_format(None, Path("out.JSONL")) == "jsonl"
    assert choose_format(None, Path("out.csv")) == "csv"
    assert choose_format("jsonl", Path("out.csv")) == "jsonl"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--format", "xlsx"], "--format 'xlsx': unknown format; use one of csv, jsonl, json, parquet"),
        (["-o", "out.txt"], "out.txt: cannot tell the format from the suffix '.txt'"),
    ],
)
def test_a_bad_format_is_refused(systems_run: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["export", str(systems_run), *args])
    assert result.exit_code == 2 and message in result.output


def test_missing_and_unfinished_run_folders_are_refused(systems_run: Path, tmp_path: Path) -> None:
    def refused(folder: Path) -> str:
        result = runner.invoke(app, ["export", str(folder)])
        assert result.exit_code == 2 and "Traceback" not in result.output
        return result.output

    assert f"{tmp_path / 'nowhere'}: no such run folder" in refused(tmp_path / "nowhere")
    folder = tmp_path / "unfinished"
    folder.mkdir()
    assert f"{folder}: not a run folder (no config.yaml)" in refused(folder)
    shutil.copy(systems_run / "config.yaml", folder)
    assert f"{folder}: no verdicts.jsonl; the run has not finished (no debate step" in refused(folder)
    shutil.copy(systems_run / "journal.jsonl", folder)
    assert "journal.jsonl holds its finished steps" in refused(folder)
    (folder / "verdicts.jsonl").write_text('\n{"item_id": "x", "referees": []}\n')
    assert f"{folder / 'verdicts.jsonl'}:2: field parse_failures: Field required" in refused(folder)
    direct = '{"item_id": "x", "parse_failures": 0, "referees": []}\n'
    (folder / "verdicts.jsonl").write_text(direct)
    assert f"{folder / 'verdicts.jsonl'}: record 1 (item x): a pairwise record needs orders" in refused(
        folder
    )


def test_a_run_killed_after_its_verdicts_exports_with_a_note(systems_run: Path, tmp_path: Path) -> None:
    for name in ("config.yaml", "verdicts.jsonl"):
        shutil.copy(systems_run / name, tmp_path)
    result = runner.invoke(app, ["export", str(tmp_path)])
    assert result.exit_code == 0 and "has no run.json" in result.stderr
    assert result.stdout == export_stdout(systems_run)
    assert not export_run(tmp_path).finished and export_run(systems_run).finished
