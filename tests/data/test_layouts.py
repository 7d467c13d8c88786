"""Responses data as people keep it (tests/data/layouts, written for these tests): one file per
system, AlpacaEval's, MT-Bench's and Arena-Hard's layouts, parquet and a dataset saved to disk
load through config alone into the same comparisons as one JSONL file with a system column."""

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from chateval.config.data import DataConfig
from chateval.core.items import PairwiseItem
from chateval.data import load_items
from chateval.errors import DataError

LAYOUTS = Path(__file__).parent / "layouts"

# The recipes of docs/systems.md ("Your own systems"), as data sections.
RECIPES: dict[str, dict[str, Any]] = {
    "one JSONL per variant": {
        "format": "table_responses",
        "path": "per_variant",
        "system_from": "file",
    },
    "AlpacaEval": {
        "format": "table_responses",
        "path": "alpaca_eval/results/*/model_outputs.json",
        "system_from": "folder",
        "fields": {"prompt": "instruction", "question": "instruction", "response": "output"},
    },
    "MT-Bench": {
        "format": "table_responses",
        "path": "mt_bench/model_answer",
        "system_from": "file",
        "fields": {"prompt": "question_id", "response": "choices.0.turns.0"},
        "questions": {"path": "mt_bench/question.jsonl", "question": "turns.0"},
    },
    "Arena-Hard": {
        "format": "table_responses",
        "path": "arena_hard/model_answer",
        "fields": {"prompt": "question_id", "system": "model_id", "response": "choices.0.turns.0.content"},
        "questions": {"path": "arena_hard/question.jsonl", "question": "turns.0.content"},
    },
}


def data_config(section: dict[str, Any], base: Path = LAYOUTS) -> DataConfig:
    """A data section with its paths made absolute, as the config loader does."""
    section = json.loads(json.dumps(section))
    path = section["path"]
    section["path"] = (
        {k: str(base / v) for k, v in path.items()} if isinstance(path, dict) else str(base / path)
    )
    for side in ("questions", "labels_file"):
        if side in section:
            section[side]["path"] = str(base / section[side]["path"])
    return DataConfig.model_validate(section)


def comparisons(section: dict[str, Any], base: Path = LAYOUTS) -> list[tuple[str | None, ...]]:
    """What each comparison holds, ids aside (AlpacaEval's prompts are their instructions)."""
    items = load_items(data_config(section, base), "pairwise")
    return [
        (i.question, i.system_a, i.system_b, i.answer_a, i.answer_b)
        for i in items
        if isinstance(i, PairwiseItem)
    ]


REFERENCE = {"format": "jsonl_responses", "path": "all_in_one.jsonl"}


@pytest.mark.parametrize("name", list(RECIPES))
def test_layout_loads_as_the_single_jsonl(name: str) -> None:
    expected = comparisons(REFERENCE)
    assert len(expected) == 9  # 3 prompts x 3 pairs
    assert comparisons(RECIPES[name]) == expected


def test_item_ids_keep_short_prompt_ids_and_hash_long_ones() -> None:
    mt = [i.id for i in load_items(data_config(RECIPES["MT-Bench"]))]
    assert mt[:3] == ["101:alpha-vs-beta", "101:alpha-vs-gamma", "101:beta-vs-gamma"]
    alpaca = load_items(data_config(RECIPES["AlpacaEval"]))
    assert alpaca[0].id.startswith("q") and alpaca[0].id.endswith(":alpha-vs-beta")
    assert len(alpaca[0].id.split(":")[0]) == 11
    assert isinstance(alpaca[0], PairwiseItem) and alpaca[0].prompt == alpaca[0].question


def test_mapping_system_to_file() -> None:
    mapping = {s: f"per_variant/{s}.jsonl" for s in ("alpha", "beta", "gamma")}
    section = {"format": "table_responses", "path": mapping}
    assert comparisons(section) == comparisons(REFERENCE)


def _write_parquet(rows: list[dict[str, Any]], path: Path) -> None:
    pq.write_table(pa.Table.from_pylist(rows), path)


def _reference_rows() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (LAYOUTS / "all_in_one.jsonl").read_text().splitlines()]


def test_parquet_one_file_and_one_per_system(tmp_path: Path) -> None:
    rows = _reference_rows()
    _write_parquet(rows, tmp_path / "all.parquet")
    assert comparisons({"format": "table_responses", "path": "all.parquet"}, tmp_path) == comparisons(
        REFERENCE
    )
    (tmp_path / "per").mkdir()
    for system in ("alpha", "beta", "gamma"):
        mine = [{k: v for k, v in r.items() if k != "system"} for r in rows if r["system"] == system]
        _write_parquet(mine, tmp_path / "per" / f"{system}.parquet")
    per = {"format": "table_responses", "path": "per", "system_from": "file"}
    assert comparisons(per, tmp_path) == comparisons(REFERENCE)


def test_dataset_saved_to_disk(tmp_path: Path) -> None:
    """The layout of ``datasets.Dataset.save_to_disk``: state.json naming Arrow stream files."""
    folder = tmp_path / "saved"
    folder.mkdir()
    table = pa.Table.from_pylist(_reference_rows())
    arrow = pa.OSFile(str(folder / "data-00000-of-00001.arrow"), "wb")
    with arrow as sink, pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    state = {"_data_files": [{"filename": "data-00000-of-00001.arrow"}], "_split": "train"}
    (folder / "state.json").write_text(json.dumps(state))
    (folder / "dataset_info.json").write_text("{}")
    assert comparisons({"format": "table_responses", "path": "saved"}, tmp_path) == comparisons(REFERENCE)
    (tmp_path / "dict").mkdir()
    (tmp_path / "dict" / "dataset_dict.json").write_text('{"splits": ["train"]}')
    with pytest.raises(DataError, match="DatasetDict saved to disk; point at one split's folder"):
        comparisons({"format": "table_responses", "path": "dict"}, tmp_path)


def test_a_stray_file_in_a_data_folder_is_named(tmp_path: Path) -> None:
    shutil.copytree(LAYOUTS / "mt_bench", tmp_path / "mt_bench")
    (tmp_path / "mt_bench" / "model_answer" / "README.md").write_text("notes")
    with pytest.raises(DataError) as error:
        comparisons(RECIPES["MT-Bench"], tmp_path)
    message = str(error.value)
    assert "model_answer: 'README.md' is not a data file" in message and "\n" not in message
    # The pattern it suggests fits the flat folder it found (issue 53: not */model_outputs.json).
    assert message.endswith(f"(here: {tmp_path / 'mt_bench' / 'model_answer' / '*.jsonl'})")


def test_a_folder_of_folders_asks_for_a_glob() -> None:
    section = {**RECIPES["AlpacaEval"], "path": "alpaca_eval/results"}
    with pytest.raises(DataError, match=r"'alpha' is not a data file .* name the files with a glob") as error:
        comparisons(section)
    assert str(error.value).endswith(
        f"(here: {LAYOUTS / 'alpaca_eval' / 'results' / '*' / 'model_outputs.json'})"
    )


def test_an_unknown_dotted_path_says_where_it_stopped() -> None:
    section = {**RECIPES["MT-Bench"], "fields": {"prompt": "question_id", "response": "choices.0.turns.5"}}
    with pytest.raises(DataError) as error:
        comparisons(section)
    assert str(error.value) == (
        f"{LAYOUTS / 'mt_bench/model_answer/alpha.jsonl'}:1: missing field 'choices.0.turns.5' "
        "(choices.0.turns has 2 entries, no position 5)"
    )
    section["fields"]["response"] = "choices.0.answer"
    with pytest.raises(DataError, match=r"choices.0 has no key 'answer' \(keys: index, turns\)"):
        comparisons(section)


def test_a_system_named_twice_is_refused(tmp_path: Path) -> None:
    by_file = {**RECIPES["AlpacaEval"], "system_from": "file"}
    with pytest.raises(
        DataError, match=r"system 'model_outputs' is named by both .* use system_from: folder"
    ):
        comparisons(by_file)
    same_file = {
        "format": "table_responses",
        "path": {"x": "per_variant/alpha.jsonl", "y": "per_variant/alpha.jsonl"},
    }
    with pytest.raises(DataError, match=r"per_variant/alpha.jsonl is mapped to both 'x' and 'y'"):
        comparisons(same_file)


def test_a_question_missing_from_the_questions_file_is_named(tmp_path: Path) -> None:
    shutil.copytree(LAYOUTS / "mt_bench", tmp_path / "mt_bench")
    questions = tmp_path / "mt_bench" / "question.jsonl"
    questions.write_text("".join(questions.read_text().splitlines(keepends=True)[:2]))
    with pytest.raises(DataError, match=r"alpha.jsonl:3: prompt '103' is not in the questions file"):
        comparisons(RECIPES["MT-Bench"], tmp_path)


def test_a_glob_that_matches_nothing() -> None:
    with pytest.raises(DataError, match="no file matches this pattern"):
        comparisons({"format": "table_responses", "path": "nowhere/*.jsonl", "system_from": "file"})
