"""chateval import of MT-Bench's single-answer grading (configs/import/mt_bench_single.yaml, on
the MT-Bench-layout sample written for this project): a direct-task run folder whose systems'
means are the scores FastChat's show_result.py prints per model and turn, checked against that
rule re-implemented here; the items are the ones a chateval direct run of the same data scores;
every bad record is refused in one line naming the file, the record and the field."""

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chateval.cli import app
from chateval.data import load_items
from chateval.errors import ConfigError, DataError
from chateval.record.inputs import file_hash
from chateval.run.finished import load_finished_run
from chateval.run.import_any import import_any
from tests.support.helpers import CONFIGS_DIR, assert_same_statistics, read_jsonl
from tests.support.import_configs import recipe_tree, write_import_config

RECIPE = CONFIGS_DIR / "import" / "mt_bench_single.yaml"
SINGLE = CONFIGS_DIR / "samples" / "mt_bench" / "model_judgment" / "sample-judge_single.jsonl"
runner = CliRunner()


def show_result_means(path: Path, turn: int) -> dict[str, float]:
    """FastChat's fastchat/llm_judge/show_result.py, display_result_single: the rows with
    score -1 dropped (``df[df["score"] != -1]``), then the mean score per (model, turn)
    (``df[df["turn"] == turn].groupby(["model", "turn"]).mean()``); plain Python here."""
    scores: dict[str, list[float]] = defaultdict(list)
    for row in read_jsonl(path):
        if row["score"] != -1 and row["turn"] == turn:
            scores[row["model"]].append(row["score"])
    return {model: sum(values) / len(values) for model, values in scores.items()}


def _means(folder: Path) -> dict[str, float]:
    metrics = json.loads((folder / "metrics.json").read_text(encoding="utf-8"))
    return {m["system"]: m["mean"]["value"] for m in metrics["systems"]["scores"]["means"]}


def _config(tmp_path: Path, change: dict[str, Any], scores: list[dict[str, Any]] | None = None) -> Path:
    """A copy of the recipe with ``change`` applied to its top level (None removes a key),
    reading ``scores`` as its scores file when given."""
    tree = recipe_tree(RECIPE)
    tree["scores"]["path"] = str(SINGLE)
    if scores is not None:
        written = tmp_path / "scores.jsonl"
        written.write_text("".join(json.dumps(s) + "\n" for s in scores), encoding="utf-8")
        tree["scores"]["path"] = str(written)
    for key, value in change.items():
        if value is None:
            tree.pop(key, None)
        else:
            tree[key] = value
    return write_import_config(tmp_path, tree)


@pytest.fixture(scope="module")
def turn_1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("single") / "turn_1"
    import_any(RECIPE, out)
    return out


def test_each_systems_mean_is_show_results_score_of_turn_1(turn_1: Path) -> None:
    reference = show_result_means(SINGLE, turn=1)
    assert reference == pytest.approx({"steady": 28 / 3, "terse": 5.5, "wordy": 5.1})  # by hand
    assert _means(turn_1) == pytest.approx(reference)


def test_turn_2_without_data_gives_show_results_score_of_turn_2(tmp_path: Path) -> None:
    out = tmp_path / "turn_2"
    import_any(_config(tmp_path, {"turn": 2, "data": None}), out)
    assert _means(out) == pytest.approx(show_result_means(SINGLE, turn=2))
    items = read_jsonl(out / "items.jsonl")
    assert {(i["response"], i["system"], i["group"]) for i in items if i["id"] == "85:steady"} == {
        ("", "steady", "85")
    }
    assert load_finished_run(out).config.data.format == "imported"


def test_the_folder_is_a_direct_run_of_the_judged_answers(turn_1: Path) -> None:
    info = json.loads((turn_1 / "run.json").read_text(encoding="utf-8"))
    imported = info["imported"]
    assert (info["task"], info["backend"], info["debates"], info["requests"]) == ("direct", "imported", 0, 0)
    assert imported["path"] == str(SINGLE) and imported["sha256"] == file_hash(SINGLE)
    assert (imported["records"], imported["kept"], imported["skipped"], imported["labels"]) == (
        36,
        18,
        {"-1": 1},
        None,
    )
    records = {r["item_id"]: r for r in read_jsonl(turn_1 / "verdicts.jsonl")}
    assert len(records) == 18 and info["verdict_parse_failures"] == 1
    # wordy on question 84, turn 1: FastChat's -1, a failed judgment with no score.
    failed = records["84:wordy"]
    assert (failed["scores"], failed["parse_failures"], failed["referees"][0]["raw"]) == (None, 1, "-1")
    kept = records["86:wordy"]  # a half point, as FastChat's literal_eval reads "[[7.5]]"
    assert kept["scores"] == {"score": 7.5} and (kept["system"], kept["prompt"], kept["category"]) == (
        "wordy",
        "86",
        "math",
    )
    metrics = json.loads((turn_1 / "metrics.json").read_text(encoding="utf-8"))
    assert (metrics["systems"]["responses"], metrics["systems"]["unscored"]) == (17, 1)
    # The items are those a chateval direct run of the same data scores: ids, texts and all.
    config = load_finished_run(turn_1).config
    assert config.task == "direct" and [d.name for d in config.dimensions] == ["score"]
    native = {item.id: item for item in load_items(config.data, "direct")}
    imported_items = read_jsonl(turn_1 / "items.jsonl")
    assert len(native) == 18 and {i["id"] for i in imported_items} == set(native)
    assert all(native[i["id"]].response == i["response"] for i in imported_items)


def test_the_cli_imports_and_rescores_to_the_same_metrics(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    result = runner.invoke(app, ["import", str(RECIPE), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "chateval import: mt_bench_single" in result.output and "9.333" in result.output
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    result = runner.invoke(app, ["rescore", str(out)])
    assert result.exit_code == 0, result.output
    assert_same_statistics(json.loads((out / "metrics.json").read_text(encoding="utf-8")), metrics)


# A good record of question 81, then the record under test (question 82 unless it says).
_FIRST = {"question_id": 81, "model": "steady", "score": 8, "turn": 1, "judge": ["sample-judge", "single-v1"]}
_GOOD = _FIRST | {"question_id": 82}


@pytest.mark.parametrize(
    ("record", "field", "says"),
    [
        (_GOOD | {"score": 11}, "score", "is 11, outside the scale 1..10 of dimension 'score'"),
        (_GOOD | {"score": "8"}, "score", "must be a number, got '8'"),
        (_GOOD | {"model": "shouty"}, "model", "system 'shouty' is not in the data"),
        (_GOOD | {"question_id": 99}, "question_id", "prompt '99' is not in the data"),
        ({k: v for k, v in _GOOD.items() if k != "model"}, "model", "missing field 'model'"),
        (_FIRST, "question_id", "prompt '81', system 'steady' is scored again"),
    ],
    ids=["off scale", "not a number", "unknown system", "unknown prompt", "missing field", "twice"],
)
def test_bad_records_name_file_record_and_field_and_write_nothing(
    tmp_path: Path, record: dict[str, Any], field: str, says: str
) -> None:
    config = _config(tmp_path, {}, scores=[_FIRST, record])
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        import_any(config, out)
    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'scores.jsonl'}:2: ") and says in message, message
    assert (repr(field) in message or "scored again" in says) and not out.exists()


def test_a_bad_direct_config_names_its_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"invalid config: scores\.scroe: unknown key"):
        import_any(_config(tmp_path, {"scores": {"path": str(SINGLE), "scroe": "score"}}))
    with pytest.raises(ConfigError, match="data.turn is None, the scores kept are of turn 2"):
        import_any(_config(tmp_path, {"turn": 2}))
    with pytest.raises(ConfigError, match="format: 'alpaca' is not an import format"):
        import_any(_config(tmp_path, {"format": "alpaca"}))
