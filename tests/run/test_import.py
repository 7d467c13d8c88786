"""chateval import: another tool's pairwise verdicts as a run folder. The recipes' samples
(configs/import: MT-Bench's layouts and a generic JSONL, written for this project) imported and
read back record by record; rescore, report, export and compare on the folders through the
CLI; every bad input refused in one line naming the file, the record and the field, with
nothing written."""

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.engines.models import DEFAULT_MODEL
from chateval.errors import ChatEvalError, ConfigError, DataError
from chateval.record.inputs import file_hash
from chateval.run.finished import load_finished_run
from chateval.run.importing import import_run
from chateval.run.runner import run
from tests.support.helpers import (
    CONFIGS_DIR,
    SAMPLE_SYSTEMS,
    assert_same_statistics,
    export_stdout,
    read_jsonl,
    tiny_config,
)
from tests.support.import_configs import recipe_tree, write_import_config
from tests.support.scripted import soft_checksum_referee

MT_BENCH = CONFIGS_DIR / "import" / "mt_bench_pairwise.yaml"
GENERIC = CONFIGS_DIR / "import" / "generic_pairwise.yaml"
runner = CliRunner()


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    return {r["item_id"]: r for r in read_jsonl(folder / "verdicts.jsonl")}


@pytest.fixture(scope="module")
def mt_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("import") / "mt_bench"
    import_run(MT_BENCH, out)
    return out


def test_mt_bench_judgments_become_a_run_folder(mt_bench: Path) -> None:
    info = json.loads((mt_bench / "run.json").read_text(encoding="utf-8"))
    judgments = CONFIGS_DIR / "samples" / "mt_bench" / "model_judgment" / "sample-judge_pair.jsonl"
    imported = info["imported"]
    assert imported["path"] == str(judgments) and imported["sha256"] == file_hash(judgments)
    assert (imported["records"], imported["kept"], imported["skipped"]) == (36, 18, {"error": 1})
    assert imported["labels"] == {
        "kind": "human",
        "path": str(CONFIGS_DIR / "samples" / "mt_bench" / "human_judgments.jsonl"),
        "labelled": 7,
        "votes": 11,
        "unused": 0,
    }
    # No model ran: no debates, requests or tokens; one referee, the imported judge.
    assert (info["debates"], info["requests"], info["generated_tokens"], info["backend"]) == (
        0,
        0,
        0,
        "imported",
    )
    assert info["referees"] == {"sample-judge": "sample-judge"} and info["position_calibration"]
    assert not (mt_bench / "transcripts.jsonl").exists()

    records = _records(mt_bench)
    assert len(records) == 18
    # 81, steady vs terse: model_1 won in both orders; two experts preferred steady.
    same = records["81:steady-vs-terse"]
    assert [(o["swapped"], o["label"]) for o in same["orders"]] == [(False, "A"), (True, "A")]
    assert [o["referees"][0]["winner_shown"] for o in same["orders"]] == ["1", "2"]
    assert (same["label"], same["human_label"], same["category"]) == ("A", "A", "writing")
    # 81, steady (model_1) vs wordy: the order flips the winner; one expert's vote on
    # "wordy vs steady" (model_b won) is the same comparison the other way round: A.
    flip = records["81:steady-vs-wordy"]
    assert [o["label"] for o in flip["orders"]] == ["A", "B"] and flip["label"] == "tie"
    assert flip["human_label"] == "A"
    # 83, steady vs wordy: three experts, two for steady.
    assert records["83:steady-vs-wordy"]["human_label"] == "A"
    # 86, terse vs wordy: two experts split: a tie.
    assert records["86:terse-vs-wordy"]["human_label"] == "tie"
    # 84, steady vs terse: g2 is "error": a failed verdict, the judge left out of both orders.
    failed = records["84:steady-vs-terse"]
    assert failed["label"] is None and failed["parse_failures"] == 1
    assert (
        failed["excluded_referees"] == ["sample-judge"]
        and failed["orders"][1]["referees"][0]["raw"] == "error"
    )
    # The items carry the data's texts (turn 1).
    items = {i["id"]: i for i in read_jsonl(mt_bench / "items.jsonl")}
    assert items["81:steady-vs-terse"]["question"].startswith("Write a four-line poem")
    assert items["81:steady-vs-terse"]["answer_b"].startswith("Keeper of light")


def test_judgebench_score_of_the_mt_bench_sample(mt_bench: Path) -> None:
    """By hand: 81 steady-terse (A, A; label A) +2 right; 81 steady-wordy (A, B; A) 0 wrong;
    82 terse-wordy (A, B; A) 0 wrong; 83 steady-wordy (B, B; A) -2 wrong; 85 steady-terse
    (B, B; B) +2 right; 84 and 86 are labelled tie: left out."""
    section = json.loads((mt_bench / "metrics.json").read_text(encoding="utf-8"))["measures"]["judgebench"]
    assert (section["pairs"], section["right"], section["tie_labels"]) == (5, 2, 2)
    assert section["accuracy"]["value"] == pytest.approx(0.4)
    assert section["by_order"]["original"]["value"] == pytest.approx(0.8)
    assert section["by_order"]["swapped"]["value"] == pytest.approx(0.4)
    assert section["sums"] == {"2": 2, "1": 0, "0": 2, "-1": 0, "-2": 1}


def test_generic_verdicts_without_data_carry_ids_only(tmp_path: Path) -> None:
    """Positions as shown (`first` is B in the swapped order) and objective labels; by hand, 8
    of 12 comparisons right, original order 9 of 12, swapped 7 of 12."""
    out = tmp_path / "generic"
    import_run(GENERIC, out)
    records = _records(out)
    # p2, careful vs brief: "first" both times: careful, then brief.
    assert [o["label"] for o in records["p2:careful-vs-brief"]["orders"]] == ["A", "B"]
    # p3, careful vs brief: a tie, then "second" with brief shown first: careful.
    assert [o["label"] for o in records["p3:careful-vs-brief"]["orders"]] == ["tie", "A"]
    assert records["p3:careful-vs-brief"]["label"] == "A"
    assert records["p4:careful-vs-brief"]["human_label"] == "B"
    assert "words_a" not in records["p1:careful-vs-brief"]
    items = read_jsonl(out / "items.jsonl")
    assert {(i["question"], i["answer_a"]) for i in items} == {("", "")}
    assert items[0]["system_a"] == "careful" and items[0]["prompt"] == "p1"
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    section = metrics["measures"]["judgebench"]
    assert (section["pairs"], section["right"]) == (12, 8)
    assert section["by_order"]["original"]["value"] == pytest.approx(9 / 12)
    assert section["by_order"]["swapped"]["value"] == pytest.approx(7 / 12)
    assert metrics["systems"]["length_controlled"] is None  # no texts, no lengths
    config = load_finished_run(out).config
    assert (config.data.format, config.agents[0].model) == ("imported", "my-judge-v1")
    result = runner.invoke(app, ["run", str(out / "config.yaml"), "-o", str(tmp_path / "again")])
    assert result.exit_code == 2 and "format 'imported' names the verdicts" in result.output
    assert not (tmp_path / "again").exists()


# Bad input: a copy of the MT-Bench recipe reading a judgments file of the test's own: a good
# record of question 81, then the record under test (question 82 unless it says).
_FIRST = {"question_id": 81, "model_1": "steady", "model_2": "terse", "g1_winner": "model_1"}
_GOOD = _FIRST | {"question_id": 82}


def _broken(tmp_path: Path, record: dict[str, Any], **changes: Any) -> tuple[Path, Path]:
    """An import config whose judgments file has a good line, then ``record``; its path."""
    judgments = tmp_path / "judgments.jsonl"
    good = _FIRST | {"g2_winner": "tie", "judge": ["sample-judge", "pair-v2"], "turn": 1}
    judgments.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
    tree = recipe_tree(MT_BENCH)
    tree["judgments"]["path"] = str(judgments)
    for key, value in changes.items():
        tree[key] = value
    return write_import_config(tmp_path, tree), judgments


@pytest.mark.parametrize(
    ("record", "field", "says"),
    [
        (_GOOD | {"model_2": "shouty"}, "model_2", "system 'shouty' is not in the data"),
        (_GOOD | {"question_id": 99}, "question_id", "prompt '99' is not in the data"),
        (
            _GOOD | {"g2_winner": "model_3"},
            "g2_winner",
            "is 'model_3'; mapped values: error, model_1, model_2, tie",
        ),
        (
            _GOOD | {"g2_winner": "tie", "judge": []},
            "judge.0",
            "missing field 'judge.0' (judge has 0 entries",
        ),
        ({k: v for k, v in _GOOD.items() if k != "model_1"}, "model_1", "missing field 'model_1'"),
    ],
    ids=["unknown system", "unknown prompt", "unmapped value", "missing dotted path", "missing field"],
)
def test_bad_input_names_file_record_and_field_and_writes_nothing(
    tmp_path: Path, record: dict[str, Any], field: str, says: str
) -> None:
    record = {"g2_winner": "tie", "judge": ["sample-judge", "pair-v2"], "turn": 1} | record
    if field == "judge.0":
        record["judge"] = []
    config, judgments = _broken(tmp_path, record)
    out = tmp_path / "out"
    with pytest.raises(DataError) as caught:
        import_run(config, out)
    message = str(caught.value)
    assert message.startswith(f"{judgments}:2: ") and repr(field) in message and says in message, message
    assert "\n" not in message and not out.exists()
    result = runner.invoke(app, ["import", str(config), "-o", str(out)])
    assert result.exit_code == 2 and result.output.startswith(f"error: {judgments}:2: ") and not out.exists()


def test_a_comparison_judged_twice_and_a_bad_config_are_refused(tmp_path: Path) -> None:
    again = _FIRST | {"model_1": "terse", "model_2": "steady", "g2_winner": "tie"}
    config, judgments = _broken(tmp_path, again | {"judge": ["sample-judge", "pair-v2"], "turn": 1})
    with pytest.raises(DataError, match=rf"^{judgments}:2: prompt '81', terse vs steady is judged again"):
        import_run(config, tmp_path / "out")
    config, _ = _broken(tmp_path, _GOOD, judgmnets={"path": "x"})
    with pytest.raises(
        ConfigError, match=rf"^{config}: invalid config: judgmnets: unknown key \(did you mean"
    ):
        import_run(config, tmp_path / "out")
    config, _ = _broken(tmp_path, _GOOD, turn=2)
    with pytest.raises(ConfigError, match="data.turn is None, the judgments kept are of turn 2"):
        import_run(config, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_finished_folder_is_kept_unless_forced(tmp_path: Path) -> None:
    out = tmp_path / "generic"
    import_run(GENERIC, out)
    with pytest.raises(ChatEvalError, match="already holds a finished run; pass --force"):
        import_run(GENERIC, out)
    import_run(GENERIC, out, force=True)


@pytest.mark.slow
def test_an_imported_run_rescores_reports_exports_and_compares(mt_bench: Path, tmp_path: Path) -> None:
    """Every command that reads run folders, on imported ones: the CLI's own outputs."""
    metrics = json.loads((mt_bench / "metrics.json").read_text(encoding="utf-8"))
    result = runner.invoke(app, ["rescore", str(mt_bench)])
    assert result.exit_code == 0, result.output
    assert_same_statistics(json.loads((mt_bench / "metrics.json").read_text(encoding="utf-8")), metrics)
    result = runner.invoke(app, ["report", str(mt_bench), "-o", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    report = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "JudgeBench score: 0.400 [" in report and "sample-judge" in report
    assert "81:steady-vs-terse" in (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    rows = export_stdout(mt_bench, "--what", "comparisons").splitlines()
    assert len(rows) == 1 + 18 * 2 and rows[1].startswith("81:steady-vs-terse,81,steady,terse,original,")
    board = export_stdout(mt_bench, "--what", "leaderboard").splitlines()
    assert board[1].startswith("1,steady,True,1000.0")
    assert len(export_stdout(mt_bench, "--what", "pairs").splitlines()) == 1 + 3

    # A chateval run of the systems sample against the generic recipe's judge of the same
    # comparisons (ids alike: the data's system order).
    native = tmp_path / "native"
    run(
        tiny_config(name="native", data={"format": "jsonl_responses", "path": SAMPLE_SYSTEMS}),
        native,
        backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, soft_checksum_referee)},
    )
    generic = tmp_path / "generic"
    result = runner.invoke(app, ["import", str(GENERIC), "-o", str(generic)])
    assert result.exit_code == 0, result.output
    assert "chateval import: generic_pairwise" in result.output and "no model ran" in result.output
    result = runner.invoke(app, ["compare", str(native), str(generic), "-o", str(tmp_path / "cmp")])
    assert result.exit_code == 0, result.output
    compared = (tmp_path / "cmp" / "compare.md").read_text(encoding="utf-8")
    assert "| native | generic_pairwise | 12 | 12 |" in compared
