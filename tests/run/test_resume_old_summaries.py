"""A journal from a release whose one summary served the whole panel cannot be resumed into
per-referee summaries: the run says so and how to start over, rather than mixing the two."""

import json
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.errors import DataError
from chateval.record.files import RunFolder
from chateval.run.runner import run
from tests.support.helpers import prompt_dependent, tiny_config


def test_a_journal_with_a_panel_summary_is_refused(tmp_path: Path) -> None:
    config = tiny_config(strategy="simultaneous_summarizer")
    backend = ScriptedBackend("smollm2-135m", prompt_dependent)
    run(config, tmp_path, backends={"smollm2-135m": backend})
    folder = RunFolder(tmp_path)
    # Make it an unfinished run of the earlier release: its summaries had no agent.
    lines = [json.loads(line) for line in folder.journal.read_text().splitlines()]
    for line in lines:
        if line.get("kind") == "summary":
            line["agent"] = None
    assert any(line.get("kind") == "summary" for line in lines)
    folder.journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    folder.info.unlink()
    with pytest.raises(DataError, match="one summary served the whole panel.*--force"):
        run(config, tmp_path, backends={"smollm2-135m": backend})
