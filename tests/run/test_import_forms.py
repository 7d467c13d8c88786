"""The import config's forms for the files the field publishes (configs/import: judgebench,
alpaca_eval, arena_hard): systems named by a field, a constant, the file's name or not at all;
the texts from a pairwise data format reading the same records, joined by id or by prompt and
systems; every inconsistent setting refused with the key, every judgment the data cannot show
refused with the record and the field, and nothing written."""

import json
from pathlib import Path
from typing import Any

import pytest

from chateval.errors import ConfigError, DataError
from chateval.run.importing import import_run
from tests.support.helpers import CONFIGS_DIR, read_jsonl
from tests.support.import_configs import write_import_config

ANNOTATIONS = CONFIGS_DIR / "samples" / "alpaca_eval" / "results" / "sample-concise" / "weighted_sample_judge"


def _alpaca(**judgments: Any) -> dict[str, Any]:
    """One AlpacaEval annotations file (the sample's), its texts from the same records."""
    return {
        "name": "alpaca_one",
        "referee": {"name": "judge", "model": "judge"},
        "judgments": {
            "path": str(ANNOTATIONS / "annotations.json"),
            "prompt": "instruction",
            "system_a": "generator_1",
            "system_b": "generator_2",
            "verdict": "preference",
            "scale": [1, 2],
        }
        | judgments,
        "data": {
            "format": "table_pairwise",
            "path": str(ANNOTATIONS / "annotations.json"),
            "fields": {
                "prompt": "instruction",
                "question": "instruction",
                "answer_a": "output_1",
                "answer_b": "output_2",
                "system_a": "generator_1",
                "system_b": "generator_2",
            },
        },
    }


def test_pairwise_data_of_the_same_records_joins_by_prompt_and_systems(tmp_path: Path) -> None:
    """The items are the data's own (ids the record numbers, as a chateval run of the same
    table_pairwise data names them); a judgment naming the systems the other way round is the
    same comparison reversed."""
    out = tmp_path / "one"
    import_run(write_import_config(tmp_path, _alpaca()), out)
    records = read_jsonl(out / "verdicts.jsonl")
    assert [r["item_id"] for r in records] == ["0", "1", "2", "3", "4", "5"]
    assert records[0]["system_a"] == "sample-reference" and records[0]["label"] == "B"  # 1.9731
    assert records[0]["orders"][0]["referees"][0]["share_a"] == pytest.approx(0.0269)

    swapped = tmp_path / "swapped.json"
    rows = json.loads((ANNOTATIONS / "annotations.json").read_text(encoding="utf-8"))
    for row in rows:  # the same verdicts, written with the systems the other way round
        row["generator_1"], row["generator_2"] = row["generator_2"], row["generator_1"]
        row["preference"] = 3 - row["preference"]
    swapped.write_text(json.dumps(rows), encoding="utf-8")
    tree = _alpaca(path=str(swapped))
    out_swapped = tmp_path / "reversed"
    import_run(write_import_config(tmp_path, tree), out_swapped)
    again = read_jsonl(out_swapped / "verdicts.jsonl")
    assert [(r["item_id"], r["label"]) for r in again] == [(r["item_id"], r["label"]) for r in records]
    assert again[0]["orders"][0]["referees"][0]["share_a"] == pytest.approx(0.0269)


def test_a_judgment_the_pairwise_data_lacks_names_its_record(tmp_path: Path) -> None:
    verdicts = tmp_path / "verdicts.jsonl"
    verdicts.write_text(
        json.dumps({"instruction": "Name a colour.", "generator_1": "x", "generator_2": "y", "preference": 2})
        + "\n",
        encoding="utf-8",
    )
    with pytest.raises(
        DataError, match=rf"^{verdicts}:1: field 'instruction': no item of the data .* compares 'x' and 'y'"
    ):
        import_run(write_import_config(tmp_path, _alpaca(path=str(verdicts))), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_pairwise_data_labels_the_comparisons_unless_labels_says(tmp_path: Path) -> None:
    """Without `labels`, a pairwise data's own labels are the comparisons' (human labels)."""
    pairs = tmp_path / "pairs.jsonl"
    rows = [
        {"id": "p1", "question": "q", "a": "one", "b": "two", "gold": "first", "verdict": "A"},
        {"id": "p2", "question": "q", "a": "three", "b": "four", "gold": "second", "verdict": "A"},
    ]
    pairs.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    tree = {
        "name": "own_labels",
        "referee": {"name": "judge", "model": "judge"},
        "judgments": {
            "path": str(pairs),
            "prompt": "id",
            "system_a": None,
            "system_b": None,
            "values": {"A": "A", "B": "B"},
        },
        "data": {
            "format": "table_pairwise",
            "path": str(pairs),
            "fields": {"id": "id", "answer_a": "a", "answer_b": "b", "label": "gold"},
            "labels": {"first": "A", "second": "B"},
        },
    }
    out = tmp_path / "out"
    import_run(write_import_config(tmp_path, tree), out)
    assert [r["human_label"] for r in read_jsonl(out / "verdicts.jsonl")] == ["A", "B"]
    labels = json.loads((out / "run.json").read_text(encoding="utf-8"))["imported"]["labels"]
    assert (labels["kind"], labels["labelled"]) == ("human", 2)
    tree["labels"] = {"field": "gold", "values": {"first": "A", "second": "B"}}
    with pytest.raises(ConfigError, match="data.fields.label: the right answers come from `labels`"):
        import_run(write_import_config(tmp_path, tree), tmp_path / "again")


def test_a_constant_and_the_file_name_naming_one_system_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model_judgment"
    folder.mkdir()
    (folder / "anchor.jsonl").write_text(json.dumps({"uid": "q1", "score": "A>B"}) + "\n", encoding="utf-8")
    tree = {
        "referee": {"name": "judge", "model": "judge"},
        "judgments": {
            "path": str(folder),
            "prompt": "uid",
            "system_a": {"name": "anchor"},
            "system_b": {"from_file": True},
            "verdict": "score",
            "values": {"A>B": "A"},
        },
    }
    with pytest.raises(
        DataError,
        match=r"anchor.jsonl:1: system_a and system_b both name 'anchor' \(the name 'anchor' and the file",
    ):
        import_run(write_import_config(tmp_path, tree), tmp_path / "out")


_BASE: dict[str, Any] = {
    "referee": {"name": "judge", "model": "judge"},
    "judgments": {"path": "verdicts.jsonl", "values": {"A": "A", "B": "B"}},
}


@pytest.mark.parametrize(
    ("change", "says"),
    [
        (
            {"judgments": {"system_a": None}},
            "system_a, system_b: both null (the records name no systems), or neither",
        ),
        (
            {"judgments": {"system_b": {"name": "x", "from_file": True}}},
            "give `name` (one system for every record) or `from_file: true`, not both",
        ),
        ({"judgments": {"weights": {"A>>B": 3}}}, "weights: 'A>>B' not a mapped verdict value"),
        ({"judgments": {"values": {}, "scale": [1, 1]}}, "scale: A's end and B's end are both 1"),
        (
            {"judgments": {"values": {"x": "skip"}}},
            "values: map at least one value to A, B or tie (or read numbers with `scale`)",
        ),
        (
            {
                "judgments": {"system_a": None, "system_b": None},
                "labels": {"path": "humans.jsonl", "values": {"A": "A"}},
            },
            "labels.path: a labels file is joined by prompt and systems, and the judgments name no systems",
        ),
        (
            {
                "judgments": {"system_a": None, "system_b": None},
                "data": {"format": "jsonl_responses", "path": "r.jsonl"},
            },
            "data.format: a responses format ('jsonl_responses') builds comparisons of named systems",
        ),
        (
            {"data": {"format": "jsonl_direct", "path": "d.jsonl"}},
            "or a pairwise one (table_pairwise, jsonl_pairwise), not 'jsonl_direct'",
        ),
    ],
    ids=[
        "one system null",
        "two ways",
        "unmapped weight",
        "flat scale",
        "no verdict",
        "labels file",
        "responses",
        "direct data",
    ],
)
def test_inconsistent_settings_are_refused_with_their_key(
    tmp_path: Path, change: dict[str, Any], says: str
) -> None:
    tree = json.loads(json.dumps(_BASE))
    for section, keys in change.items():
        tree[section] = tree.get(section, {}) | keys
    with pytest.raises(ConfigError) as caught:
        import_run(write_import_config(tmp_path, tree), tmp_path / "out")
    assert says in str(caught.value), str(caught.value)
    assert not (tmp_path / "out").exists()
