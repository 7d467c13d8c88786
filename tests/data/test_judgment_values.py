"""One imported verdict read (chateval.data.verdict_values): a value map, a numeric scale (the
midpoint a tie, the position kept as A's share of the win), weights, numbers spelt as YAML and
JSON spell them, and null verdicts skipped or refused, naming the record and the field."""

from typing import Any

import pytest

from chateval.config.imports import JudgmentsFile
from chateval.data.verdict_values import Verdict, read_verdict
from chateval.errors import DataError


def _files(**settings: Any) -> JudgmentsFile:
    return JudgmentsFile.model_validate({"path": "verdicts.jsonl"} | settings)


def _read(files: JudgmentsFile, record: dict[str, Any], key: str = "verdict") -> Verdict:
    return read_verdict(record, key, files.values, files, "verdicts.jsonl:3")


@pytest.mark.parametrize(
    ("preference", "label", "share_a"),
    [(1, "A", 1.0), (2.0, "B", 0.0), (1.5, "tie", 0.5), (1.25, "A", 0.75), (1.5000001, "B", 0.4999999)],
)
def test_a_scale_reads_the_nearer_end_and_keeps_the_position(
    preference: float, label: str, share_a: float
) -> None:
    verdict = _read(_files(scale=[1, 2]), {"verdict": preference})
    assert (verdict.label, verdict.weight) == (label, None)
    assert verdict.share_a == pytest.approx(share_a)


def test_a_scale_may_run_either_way_and_values_read_what_lies_off_it() -> None:
    backwards = _files(scale=[10, 0])  # 10: A's answer better
    assert _read(backwards, {"verdict": 8}).label == "A"
    assert _read(backwards, {"verdict": "2.5"}).share_a == pytest.approx(0.25)  # a CSV cell
    files = _files(scale=[1, 2], values={0: "tie", "error": "skip"})
    assert _read(files, {"verdict": 0.0}) == Verdict("tie", "0")  # YAML's 0 names JSON's 0.0
    assert _read(files, {"verdict": "error"}) == Verdict(None, "error")
    with pytest.raises(DataError, match=r"^verdicts.jsonl:3: field 'verdict' is 3; mapped values: a number "):
        _read(files, {"verdict": 3})


def test_weights_go_with_the_values_they_name() -> None:
    files = _files(values={"A>>B": "A", "A>B": "A", "B>A": "B"}, weights={"A>>B": 3})
    assert _read(files, {"verdict": "A>>B"}) == Verdict("A", "A>>B", 3.0)
    assert _read(files, {"verdict": "B>A"}) == Verdict("B", "B>A", 1.0)
    assert _read(_files(values={"A>B": "A"}), {"verdict": "A>B"}).weight is None  # no weights


@pytest.mark.parametrize(
    "record",
    [{"games": [{"score": None}]}, {"games": [None]}, {"games": [{"score": float("nan")}]}],
    ids=["null value", "null game", "NaN"],
)
def test_a_null_verdict_is_skipped_or_refused(record: dict[str, Any]) -> None:
    skip = _files(values={"A>B": "A"}, no_verdict="skip")
    assert _read(skip, record, "games.0.score") == Verdict(None, "null")
    with pytest.raises(DataError) as caught:
        _read(_files(values={"A>B": "A"}), record, "games.0.score")
    message = str(caught.value)
    assert message.startswith("verdicts.jsonl:3: ") and "'games.0.score'" in message
    assert "judgments.no_verdict: skip" in message


def test_an_absent_field_is_an_error_even_when_nulls_are_skipped() -> None:
    """A misspelt field must not read as a judge that never answered."""
    skip = _files(values={"A>B": "A"}, no_verdict="skip")
    with pytest.raises(
        DataError, match=r"missing field 'games.1.score' \(games has 1 entries, no position 1\)"
    ):
        _read(skip, {"games": [{"score": "A>B"}]}, "games.1.score")
    with pytest.raises(DataError, match="missing field 'verdikt'"):
        _read(skip, {"verdict": "A>B"}, "verdikt")
