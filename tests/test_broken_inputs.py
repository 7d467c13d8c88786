"""Table-driven: every broken input file under tests/broken gives its clear one-line error."""

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from chateval.cli import app
from tests.conftest import MODELS_DIR

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
