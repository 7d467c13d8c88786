"""Human pairwise labels on responses data (``data.labels_file``): joined to the comparisons the
design builds in either order, unused ones reported, and every label setting a format would
ignore refused."""

import logging
from pathlib import Path
from typing import Any

import pytest

from chateval.config.files import load_config
from chateval.core.items import PairwiseItem
from chateval.data import load_items
from chateval.errors import ConfigError, DataError
from tests.data.test_layouts import LAYOUTS, RECIPES, data_config

LABELS = {
    "path": "labels.csv",
    "prompt": "question_id",
    "system_a": "model_a",
    "system_b": "model_b",
    "label": "winner",
    "values": {"model_a": "A", "model_b": "B", "tie": "tie"},
}


def labelled(section: dict[str, Any], base: Path = LAYOUTS) -> dict[str, str]:
    items = load_items(data_config(section, base), "pairwise")
    return {i.id: i.label for i in items if isinstance(i, PairwiseItem) and i.label is not None}


def test_labels_join_in_either_order() -> None:
    # labels.csv: 101 alpha>beta; 101 gamma (as model_a) > alpha; 102 beta = gamma; 103 beta vs
    # alpha won by model_b (alpha). Built as all pairs, the earlier system (alpha, beta) is A.
    assert labelled({**RECIPES["MT-Bench"], "labels_file": LABELS}) == {
        "101:alpha-vs-beta": "A",
        "101:alpha-vs-gamma": "B",
        "102:beta-vs-gamma": "tie",
        "103:alpha-vs-beta": "A",
    }


def test_a_label_for_a_pair_not_built_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    section = {**RECIPES["MT-Bench"], "labels_file": LABELS, "compare": {"against": "gamma"}}
    with caplog.at_level(logging.WARNING):
        joined = labelled(section)
    assert joined == {"101:alpha-vs-gamma": "B", "102:beta-vs-gamma": "tie"}
    warnings = [r.getMessage() for r in caplog.records if "human label" in r.getMessage()]
    first = LAYOUTS / "labels.csv"
    assert warnings == [
        f"2 human labels not used: pair not compared by the design (data.compare) (first: {first}:2)"
    ]


def test_a_label_of_an_unjudged_prompt_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        joined = labelled({**RECIPES["MT-Bench"], "labels_file": LABELS, "limit": 1})
    assert joined == {"101:alpha-vs-beta": "A", "101:alpha-vs-gamma": "B"}
    assert any("2 human labels not used: prompt not judged" in r.getMessage() for r in caplog.records)


def test_label_fraction_keeps_a_share_of_the_joined_labels() -> None:
    kept = labelled({**RECIPES["MT-Bench"], "labels_file": LABELS, "label_fraction": 0.5})
    assert len(kept) == 2


def _labels_file(tmp_path: Path, text: str) -> dict[str, Any]:
    (tmp_path / "labels.csv").write_text(text)
    return {**LABELS, "path": str(tmp_path / "labels.csv")}


def test_bad_labels_name_the_row(tmp_path: Path) -> None:
    header = "question_id,model_a,model_b,winner\n"
    cases = {
        "101,alpha,delta,model_a\n": (
            r"labels.csv:2: system 'delta' is not in the responses data \(systems: alpha, beta, gamma\)"
        ),
        "101,alpha,beta,model_a\n101,beta,alpha,tie\n": (
            r"labels.csv:3: prompt '101', beta vs alpha is labelled again \(first at .*labels.csv:2\)"
        ),
        "101,alpha,beta,left\n": r"labels.csv:2: field 'winner' is 'left'; mapped values: model_a, model_b",
        "101,alpha,alpha,tie\n": r"labels.csv:2: fields 'model_a' and 'model_b' both name 'alpha'",
    }
    for rows, message in cases.items():
        with pytest.raises(DataError, match=message):
            labelled({**RECIPES["MT-Bench"], "labels_file": _labels_file(tmp_path, header + rows)})
    # No label column at all: named, with the columns the file has (issue 53).
    without = "question_id,model_a,model_b,preferred\n101,alpha,beta,model_a\n"
    with pytest.raises(
        DataError,
        match=r"labels.csv:2: missing field 'winner'; the record's fields: question_id, model_a, model_b, "
        r"preferred",
    ):
        labelled({**RECIPES["MT-Bench"], "labels_file": _labels_file(tmp_path, without)})


def test_labels_file_on_direct_scoring_is_refused() -> None:
    with pytest.raises(DataError, match="labels.csv: pairwise labels; direct scoring reads human scores"):
        load_items(data_config({**RECIPES["MT-Bench"], "labels_file": LABELS}), "direct")


def _config(tmp_path: Path, data: str) -> Path:
    path = tmp_path / "run.yaml"
    path.write_text(f"task: pairwise\nagents: [{{role: general_public, model: smollm2-135m}}]\ndata:\n{data}")
    return path


REFUSED = {
    "  format: table_responses\n  path: x.jsonl\n  fields: {label: winner}\n": (
        "data: fields.label: format 'table_responses' does not read it; "
        "pairwise human labels on responses data come from data.labels_file"
    ),
    "  format: jsonl_responses\n  path: x.jsonl\n  labels: {1: A}\n": (
        "data: labels: format 'jsonl_responses' reads no label values (see data.labels_file.values)"
    ),
    "  format: faireval\n  path: x\n  labels_file: {path: l.csv}\n": (
        "data: labels_file: only the formats jsonl_responses, table_responses read them; "
        "format 'faireval' does not"
    ),
    "  format: jsonl_pairwise\n  path: x.jsonl\n  fields: {question: q}\n": (
        "data: fields.question: format 'jsonl_pairwise' does not read it"
    ),
    "  format: table_direct\n  path: x.csv\n  fields: {question: q, label: l}\n": (
        "data: fields.label, fields.question: format 'table_direct' does not read them"
    ),
    "  format: table_responses\n  path: {a: x.jsonl}\n  system_from: file\n": (
        "data: system_from: with path a mapping, its keys name the systems"
    ),
}


@pytest.mark.parametrize("data", list(REFUSED))
def test_settings_a_format_ignores_are_refused(tmp_path: Path, data: str) -> None:
    with pytest.raises(ConfigError) as error:
        load_config(_config(tmp_path, data))
    assert str(error.value).endswith(REFUSED[data])
    assert "\n" not in str(error.value)


def test_label_fraction_without_labels_is_refused() -> None:
    message = (
        r"label_fraction is 0.25, but no item carries a human label to keep \(pairwise labels on responses"
    )
    with pytest.raises(DataError, match=message):
        load_items(data_config({**RECIPES["MT-Bench"], "label_fraction": 0.25}), "pairwise")
