"""Control characters in a data file's or a model's text (an escaped ``\\u0000`` in an answer)
reach report.html as their pictures (U+2400 ␀ ...), not raw: HTML has no place for them, and a
browser would drop them without a trace."""

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.core.backend import GenerationRequest
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.helpers import asks_for_scores, prompt_dependent, tiny_config

RAW_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def nul_talker(request: GenerationRequest) -> str:
    """A referee whose talk holds a NUL and an escape; its verdicts are the scripted ones."""
    return prompt_dependent(request) if asks_for_scores(request) else "said\x00this \x1b[31mred"


def test_control_characters_are_shown_as_their_pictures(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    record = {
        "id": "nul",
        "question": "Which?\x07",
        "answer_a": "before\u0000after",
        "answer_b": "del\x7f and a C1 control\x85 and a tab\tkept",
        "label": "A",
    }
    data.write_text(json.dumps(record) + "\n")  # escaped, as a user's JSON would hold them
    assert "\\u0000" in data.read_text()
    config = tiny_config(data={"format": "jsonl_pairwise", "path": str(data)})
    run(config, tmp_path / "run", backends={DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, nul_talker)})

    result = CliRunner().invoke(app, ["report", str(tmp_path / "run"), "-o", str(tmp_path / "report")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "report" / "report.html").read_text(encoding="utf-8")
    assert RAW_CONTROLS.search(page) is None
    assert "before\u2400after" in page  # ␀
    assert "Which?\u2407" in page  # ␇
    assert "del\u2421" in page and "control\ufffd" in page and "tab\tkept" in page
    assert "said\u2400this \u241b[31mred" in page  # the referee's own words: ␀ and ␛
