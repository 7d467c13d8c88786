"""chateval JSONL loaders: records, and errors that name file, line and field."""

import json
from pathlib import Path

import pytest

from chateval.config.data import DataConfig
from chateval.core.items import DirectItem, PairwiseItem
from chateval.data import load_items as _load_items
from chateval.errors import DataError
from tests.support.helpers import CONFIGS_DIR


def load_items(fmt: str, path: Path, **options: object) -> list:  # type: ignore[type-arg]
    return _load_items(DataConfig(format=fmt, path=path, **options))  # type: ignore[arg-type]


def test_samples_load() -> None:
    pairwise = load_items("jsonl_pairwise", CONFIGS_DIR / "samples/quickstart_pairwise.jsonl")
    direct = load_items("jsonl_direct", CONFIGS_DIR / "samples/quickstart_direct.jsonl")
    assert len(pairwise) == 12 and all(isinstance(i, PairwiseItem) and i.label for i in pairwise)
    assert len(direct) == 6 and all(isinstance(i, DirectItem) and i.scores for i in direct)


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", r"bad.jsonl:2: invalid JSON"),
        ('["a"]', r"bad.jsonl:2: expected a JSON object"),
        ('{"id": "2", "question": "q", "answer_a": "a"}', r"bad.jsonl:2: missing field 'answer_b'"),
        (
            '{"id": "2", "question": "", "answer_a": "a", "answer_b": "b"}',
            r"bad.jsonl:2: field 'question' is empty",
        ),
        (
            '{"id": "2", "question": 5, "answer_a": "a", "answer_b": "b"}',
            r"field 'question' must be a string",
        ),
        ('{"id": "1", "question": "q", "answer_a": "a", "answer_b": "b"}', r"bad.jsonl:2: duplicate id '1'"),
        ('{"id": "2", "question": "q", "answer_a": "a", "answer_b": "b", "label": "C"}', r"'label' is 'C'"),
    ],
)
def test_pairwise_errors(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "1", "question": "q", "answer_a": "a", "answer_b": "b"}\n' + line + "\n")
    with pytest.raises(DataError, match=message):
        load_items("jsonl_pairwise", path)


def test_missing_file_and_unknown_format(tmp_path: Path) -> None:
    from pydantic import ValidationError

    with pytest.raises(DataError, match="not found"):
        load_items("jsonl_pairwise", tmp_path / "nope.jsonl")
    with pytest.raises(ValidationError, match="unknown data format 'xml'"):  # refused with the config
        load_items("xml", tmp_path / "nope.jsonl")


def test_direct_scores_must_be_numbers(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": 1, "context": "c", "response": "r", "scores": {"a": "high"}}\n')
    with pytest.raises(DataError, match=r"d.jsonl:1: field 'scores'"):
        load_items("jsonl_direct", path)


SHARED = Path(__file__).resolve().parents[3] / "shared" / "datasets"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/datasets not present")


@needs_shared
def test_faireval_raw_release() -> None:
    items = load_items("faireval", SHARED / "faireval")
    assert len(items) == 80
    labels = [i.label for i in items]
    assert (labels.count("A"), labels.count("B"), labels.count("tie")) == (41, 25, 14)
    assert items[0].id == "1" and items[0].question.startswith("How can I improve my time management")


@needs_shared
def test_faireval_reversed_pair_flips_labels() -> None:
    items = load_items("faireval", SHARED / "faireval", pair=("vicuna-13b", "gpt35"))
    labels = [i.label for i in items]
    assert (labels.count("A"), labels.count("B")) == (25, 41)


@needs_shared
def test_faireval_unlabelled_pair_and_unknown_model() -> None:
    items = load_items("faireval", SHARED / "faireval", pair=("gpt-4", "alpaca-13b"))
    assert len(items) == 80 and all(i.label is None for i in items)
    with pytest.raises(DataError, match=r"no answers for model 'gpt-5'.*gpt35"):
        load_items("faireval", SHARED / "faireval", pair=("gpt-5", "gpt35"))


@needs_shared
def test_chateval_preprocessed_matches_raw_release() -> None:
    items = load_items("chateval_faireval", SHARED / "chateval_faireval/preprocessed_data/test.json")
    raw = load_items("faireval", SHARED / "faireval")
    assert len(items) == 80
    assert [i.label for i in items] == [i.label for i in raw]
    assert [i.answer_b for i in items] == [i.answer_b for i in raw]


@needs_shared
def test_topical_chat() -> None:
    items = load_items("topical_chat", SHARED / "topical_chat/topical_chat.json")
    assert len(items) == 360
    assert len({i.context for i in items}) == 60
    assert set(items[0].scores) >= {"naturalness", "coherence", "engagingness", "groundedness"}
    assert items[0].context.splitlines()[-1].startswith("B: ")
    assert items[0].knowledge


def test_table_csv_with_field_mapping(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text(
        "qid,prompt,left,right,winner\n7,Why?,Because.,No idea.,left\n8,How?,Like so.,Thus.,same\n"
    )
    items = load_items(
        "table_pairwise",
        path,
        fields={
            "id": "qid",
            "question": "prompt",
            "answer_a": "left",
            "answer_b": "right",
            "label": "winner",
        },
        labels={"left": "A", "right": "B", "same": "tie"},
    )
    assert [(i.id, i.label) for i in items] == [("7", "A"), ("8", "tie")]


def test_table_label_outside_mapping_names_row(tmp_path: Path) -> None:
    path = tmp_path / "mine.csv"
    path.write_text("prompt,left,right,winner\nWhy?,a,b,left\nHow?,a,b,both\n")
    with pytest.raises(DataError, match=r"mine.csv:3: field 'winner' is 'both'"):
        load_items(
            "table_pairwise",
            path,
            fields={"question": "prompt", "answer_a": "left", "answer_b": "right", "label": "winner"},
            labels={"left": "A", "right": "B"},
        )


def test_table_direct_json(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(
        '[{"dialog": "hi", "reply": "hello", "fluency": 4}, {"dialog": "x", "reply": "y", "fluency": "n/a"}]'
    )
    with pytest.raises(DataError, match=r"d.json: item 1: field 'fluency' must be a number"):
        load_items(
            "table_direct",
            path,
            fields={"context": "dialog", "response": "reply"},
            scores={"fluency": "fluency"},
        )


def test_line_separators_inside_a_record_do_not_split_it(tmp_path: Path) -> None:
    """JSON allows U+2028 and other separators raw in a string (json.dumps writes them so):
    only a newline ends a JSONL record, and the line numbers are the file's."""
    path = tmp_path / "items.jsonl"
    records = [
        {"id": "1", "question": "q\u2028q", "answer_a": "a\x1ca", "answer_b": "b\x85b"},
        {"id": "2", "question": "q", "answer_a": "a"},
    ]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    with pytest.raises(DataError, match=r"items.jsonl:2: missing field 'answer_b'"):
        load_items("jsonl_pairwise", path)
    records[1]["answer_b"] = "b"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    first = load_items("jsonl_pairwise", path)[0]
    assert (first.question, first.answer_a, first.answer_b) == ("q\u2028q", "a\x1ca", "b\x85b")
