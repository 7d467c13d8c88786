"""Categories: ``fields.category`` (or ``questions.category``) in any data format puts each item
in a category; every figure is then also reported per category (a registered table measure) in
metrics.json, the console, report.md, the HTML and ``export --what categories``. Scripted
referees: the numbers are checked against the same statistics computed on each category's
records by hand."""

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.config.files import load_config
from chateval.debate.building import load_run_items
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ConfigError, DataError
from chateval.evaluation.agreement.metrics import pairwise_metrics
from chateval.reporting.html import write_html_report
from chateval.reporting.markdown import write_report
from chateval.reporting.summary import print_summary
from chateval.run.runner import RunResult, run
from tests.support.helpers import CONFIGS_DIR, prompt_dependent, tiny_config
from tests.support.scripted import soft_checksum_referee

runner = CliRunner()
MT_BENCH = CONFIGS_DIR / "samples" / "mt_bench"


def _mt_bench_data(**extra: Any) -> dict[str, Any]:
    """configs/systems_categories.yaml's data section (the MT-Bench-layout sample)."""
    return {
        "format": "table_responses",
        "path": str(MT_BENCH / "model_answer"),
        "system_from": "file",
        "fields": {"prompt": "question_id", "response": "choices.0.turns.0"},
        "questions": {
            "path": str(MT_BENCH / "question.jsonl"),
            "question": "turns.0",
            "category": "category",
        },
        **extra,
    }


@pytest.fixture(scope="module")
def categories_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, RunResult]:
    out = tmp_path_factory.mktemp("categories")
    config = tiny_config(data=_mt_bench_data(limit=4))
    result = run(config, out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)})
    return out, result


def _pairwise_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def test_the_config_in_configs_reads_each_prompts_category() -> None:
    items = load_run_items(tiny_config(data=_mt_bench_data()))
    assert len(items) == 18  # 6 questions x 3 pairs
    assert [item.category for item in items[::3]] == [
        "writing",
        "writing",
        "reasoning",
        "reasoning",
        "math",
        "math",
    ]
    shipped = load_run_items(load_config(CONFIGS_DIR / "systems_categories.yaml"))
    assert {item.category for item in shipped} == {"writing", "reasoning", "math"}


@pytest.mark.slow  # a scripted run end to end; the fast tier keeps the loaders' tests
def test_every_figure_per_category_from_the_records(categories_run: tuple[Path, RunResult]) -> None:
    folder, result = categories_run
    metrics = json.loads((folder / "metrics.json").read_text())
    section = metrics["measures"]["categories"]
    records = [json.loads(line) for line in (folder / "verdicts.jsonl").read_text().splitlines()]
    assert [e["category"] for e in section["categories"]] == ["writing", "reasoning"]  # limit 4: 4 prompts
    for entry in section["categories"]:
        mine = [r for r in records if r["category"] == entry["category"]]
        assert entry["items"] == len(mine) == 6  # 2 prompts x 3 pairs
        assert entry["agreement"] is None  # no human labels
        rows = entry["systems"]["rows"]
        assert {row["system"] for row in rows} == {"steady", "terse", "wordy"}
        for row in rows:  # each system's record against the field, within the category
            own = [r for r in mine if row["system"] in (r["system_a"], r["system_b"])]
            assert row["n"] == len(own) == 4
            wins = sum(
                (r["label"] == "A") == (r["system_a"] == row["system"]) and r["label"] != "tie" for r in own
            )
            assert row["wins"] == wins
    # The items as debated keep their category too (a report never reads the data again).
    items = [json.loads(line) for line in (folder / "items.jsonl").read_text().splitlines()]
    assert {item["category"] for item in items} == {"writing", "reasoning"}


@pytest.mark.slow  # a scripted run end to end; the fast tier keeps the loaders' tests
def test_agreement_per_category_is_the_whole_runs_statistic_on_its_items(tmp_path: Path) -> None:
    rows = [
        {
            "id": f"q{i}",
            "question": f"Question {i}?",
            "answer_a": f"Yes {i}.",
            "answer_b": f"No {i}, because.",
            "label": label,
            "topic": topic,
        }
        for i, (label, topic) in enumerate(
            [("A", "a"), ("B", "a"), ("tie", "a"), ("A", "b"), ("A", "b"), ("B", "b"), ("B", "b")]
        )
    ]
    data = {
        "format": "jsonl_pairwise",
        "path": str(_pairwise_rows(tmp_path / "d.jsonl", rows)),
        "fields": {"category": "topic"},
    }
    config = tiny_config(data=data, position_calibration=False)
    out = tmp_path / "run"
    run(config, out, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    records = [json.loads(line) for line in (out / "verdicts.jsonl").read_text().splitlines()]
    section = json.loads((out / "metrics.json").read_text())["measures"]["categories"]
    for entry in section["categories"]:
        mine = [r for r in records if r["category"] == entry["category"]]
        expected = pairwise_metrics([r["human_label"] for r in mine], [r["label"] for r in mine], 0)
        assert entry["agreement"] == json.loads(json.dumps(expected))
        assert entry["systems"] is None  # the items name no systems


@pytest.mark.slow  # a scripted run end to end; the fast tier keeps the loaders' tests
def test_every_report_shows_the_categories(
    categories_run: tuple[Path, RunResult], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder, result = categories_run
    print_summary(result)
    out = capsys.readouterr().out
    assert "systems per category" in out and "writing" in out and "reasoning" in out
    report = write_report([folder], tmp_path / "md").read_text()
    assert "## Per category: test" in report and "### systems per category (hard decisions)" in report
    page = write_html_report([folder], tmp_path / "html").read_text()
    assert "<h3>systems per category (hard decisions)</h3>" in page and "<td>reasoning</td>" in page
    exported = runner.invoke(app, ["export", str(folder), "--what", "categories"])
    assert exported.exit_code == 0, exported.output
    table = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len(table) == 6  # 2 categories x 3 systems
    assert {row["category"] for row in table} == {"writing", "reasoning"}
    assert all(row["win_rate_low"] <= row["win_rate"] <= row["win_rate_high"] for row in table)


@pytest.mark.slow  # a scripted run end to end; the fast tier keeps the loaders' tests
def test_a_run_without_categories_has_no_section_and_its_items_file_is_unchanged(tmp_path: Path) -> None:
    run(tiny_config(), tmp_path, backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)})
    assert "categories" not in json.loads((tmp_path / "metrics.json").read_text())["measures"]
    assert '"category"' not in (tmp_path / "items.jsonl").read_text()
    refused = runner.invoke(app, ["export", str(tmp_path), "--what", "categories"])
    assert refused.exit_code == 2 and "its items have no categories" in refused.output


def test_a_missing_or_bad_category_names_the_file_record_and_field(tmp_path: Path) -> None:
    good = {"id": "1", "question": "Q?", "answer_a": "a", "answer_b": "b", "topic": "x"}
    path = _pairwise_rows(tmp_path / "d.jsonl", [good, {**good, "id": "2", "topic": None}])
    data = {"format": "jsonl_pairwise", "path": str(path), "fields": {"category": "topic"}}
    with pytest.raises(
        DataError, match=r"d.jsonl:2: missing field 'topic' \(fields.category\); the record's fields"
    ):
        load_run_items(tiny_config(data=data))
    _pairwise_rows(path, [good, {**good, "id": "2", "topic": ["x"]}])
    with pytest.raises(DataError, match=r"d.jsonl:2: field 'topic' \(fields.category\) must be a string"):
        load_run_items(tiny_config(data=data))
    # A questions file whose category field is absent says so with the file and line.
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question_id": 81, "turns": ["Q?"]}) + "\n")
    bad = _mt_bench_data(questions={"path": str(questions), "question": "turns.0", "category": "category"})
    with pytest.raises(DataError, match=r"q.jsonl:1: missing field 'category' \(fields.category\)"):
        load_run_items(tiny_config(data=bad))


def _task_for(data: dict[str, Any]) -> dict[str, Any]:
    if data["format"] == "faireval":
        return {}
    dimension = {"name": "fluency", "description": "reads well", "low": 1, "high": 3}
    return {"task": "direct", "position_calibration": False, "dimensions": [dimension]}


def test_fields_category_is_read_by_every_format() -> None:
    for data in (
        {"format": "topical_chat", "path": "x.json", "fields": {"category": "c"}},
        {"format": "faireval", "path": "x", "fields": {"category": "category"}},
        {"format": "jsonl_direct", "path": "x.jsonl", "fields": {"category": "c"}},
    ):
        tiny_config(**_task_for(data), data=data)
    with pytest.raises(ConfigError, match="fields.knowledge: format 'topical_chat' does not read it"):
        tiny_config(
            task="direct", data={"format": "topical_chat", "path": "x.json", "fields": {"knowledge": "k"}}
        )
