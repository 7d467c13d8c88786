"""Table-driven: every broken input file under tests/data/broken gives its clear one-line error."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from chateval.cli import app
from tests.support.helpers import MODELS_DIR

BROKEN = Path(__file__).resolve().parent / "broken"
CASES: list[dict[str, Any]] = yaml.safe_load((BROKEN / "cases.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[f"{c['file']}-{c['data']['format']}" for c in CASES])
def test_broken_input_is_a_clear_error(case: dict[str, Any], tmp_path: Path) -> None:
    config: dict[str, Any] = {
        "task": case.get("task", "pairwise"),
        "data": {**case["data"], "path": str(BROKEN / case["file"])},
        "agents": [{"role": "critic"}],
        "models_dir": str(MODELS_DIR),
    }
    if config["task"] == "direct":
        config["dimensions"] = [{"name": "fluency", "description": "reads well"}]
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    result = CliRunner().invoke(app, ["run", str(path), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert case["message"] in result.output
    assert "Traceback" not in result.output
    assert result.output.count("\n") == 1  # one line
    assert not (tmp_path / "out").exists()  # nothing written for bad input


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("bad_syntax.yaml", "bad_syntax.yaml: invalid YAML at line 4, column 1: expected ',' or ']'"),
        ("not_utf8_config.yaml", "not_utf8_config.yaml:3: not UTF-8 text (byte 0xe9"),
    ],
)
def test_broken_config_is_a_one_line_error(config: str, message: str, tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["run", str(BROKEN / config), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert "Traceback" not in result.output and result.output.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_numeric_label_keys_match_the_data(tmp_path: Path) -> None:
    """``labels: {1: A, 2: B}`` (YAML integers) maps a column of 1s and 2s."""
    from chateval.config.files import load_config
    from chateval.data import load_items

    path = tmp_path / "config.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "task": "pairwise",
                "agents": [{"role": "critic"}],
                "data": {
                    "format": "table_pairwise",
                    "path": str(BROKEN / "numeric_labels.csv"),
                    "fields": {
                        "question": "prompt",
                        "answer_a": "left",
                        "answer_b": "right",
                        "label": "winner",
                    },
                    "labels": {1: "A", 2: "B"},
                },
            }
        )
    )
    assert "1: A" in path.read_text()  # written as a YAML integer key
    items = load_items(load_config(path).data)
    assert [item.label for item in items] == ["A", "B"]  # type: ignore[union-attr]
