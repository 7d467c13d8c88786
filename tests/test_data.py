"""chateval JSONL loaders: records, and errors that name file, line and field."""

from pathlib import Path

import pytest

from chateval.data import load_items
from chateval.data.items import DirectItem, PairwiseItem
from chateval.errors import DataError
from tests.conftest import CONFIGS_DIR


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
    from chateval.errors import ConfigError

    with pytest.raises(DataError, match="not found"):
        load_items("jsonl_pairwise", tmp_path / "nope.jsonl")
    with pytest.raises(ConfigError, match="unknown data format 'xml'"):
        load_items("xml", tmp_path / "nope.jsonl")


def test_direct_scores_must_be_numbers(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": 1, "context": "c", "response": "r", "scores": {"a": "high"}}\n')
    with pytest.raises(DataError, match=r"d.jsonl:1: field 'scores'"):
        load_items("jsonl_direct", path)
