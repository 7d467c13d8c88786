"""Durable runs: a run stopped after any step resumes to byte-identical outputs."""

import json
from pathlib import Path

import pytest

from chateval.backends.scripted import ScriptedBackend
from chateval.errors import BackendError, ConfigError
from chateval.run.runner import run
from tests.support.helpers import prompt_dependent, quickstart_config
from tests.support.scripted import DiesAtCall

OUTPUTS = ("transcripts.jsonl", "verdicts.jsonl", "metrics.json")


config = quickstart_config


@pytest.fixture
def reference(scripted_reference: Path) -> Path:
    return scripted_reference


@pytest.mark.parametrize("fail_at", [1, 2, 3, 4])
def test_backend_failure_then_resume_gives_identical_outputs(
    reference: Path, tmp_path: Path, fail_at: int
) -> None:
    with pytest.raises(BackendError):
        run(
            config(),
            tmp_path,
            backends={"smollm2-135m": DiesAtCall("smollm2-135m", prompt_dependent, fail_at)},
        )
    assert not (tmp_path / "run.json").exists()
    journal = tmp_path / "journal.jsonl"
    steps_on_disk = journal.read_text().count('"step_done"') if journal.exists() else 0
    assert steps_on_disk == fail_at - 1
    backend = ScriptedBackend("smollm2-135m", prompt_dependent)
    run(config(), tmp_path, backends={"smollm2-135m": backend})
    assert len(backend.calls) == 6 - (fail_at - 1)  # finished steps are not redone
    for name in OUTPUTS:
        assert (tmp_path / name).read_bytes() == (reference / name).read_bytes(), name
    info = json.loads((tmp_path / "run.json").read_text())
    ref_info = json.loads((reference / "run.json").read_text())
    for key in ("batches", "engine_steps", "requests", "prompt_tokens", "generated_tokens", "steps"):
        assert info[key] == ref_info[key], key
    assert info["resumed"] is True


def test_half_written_journal_tail_is_dropped(reference: Path, tmp_path: Path) -> None:
    with pytest.raises(BackendError):
        run(config(), tmp_path, backends={"smollm2-135m": DiesAtCall("smollm2-135m", prompt_dependent, 3)})
    journal = tmp_path / "journal.jsonl"
    with journal.open("a") as handle:  # a kill in the middle of writing step 3
        handle.write('{"step": 2, "debate": "q01", "round": 1, "agent": 0, "speaker": "Critic", "ki')
    run(config(), tmp_path, backends={"smollm2-135m": ScriptedBackend("smollm2-135m", prompt_dependent)})
    for name in OUTPUTS:
        assert (tmp_path / name).read_bytes() == (reference / name).read_bytes(), name
    assert journal.read_text().count('"step_done"') == 6


def test_resume_with_changed_config_is_refused(tmp_path: Path) -> None:
    with pytest.raises(BackendError):
        run(config(), tmp_path, backends={"smollm2-135m": DiesAtCall("smollm2-135m", prompt_dependent, 2)})
    with pytest.raises(ConfigError, match=r"changed: rounds, sampling.temperature"):
        changed = config(
            rounds=3, sampling={"temperature": 0.5, "discussion_max_tokens": 12, "summary_max_tokens": 12}
        )
        run(changed, tmp_path, backends={})
    # --force starts over.
    run(
        config(rounds=3),
        tmp_path,
        force=True,
        backends={"smollm2-135m": ScriptedBackend("smollm2-135m", prompt_dependent)},
    )
    assert json.loads((tmp_path / "run.json").read_text())["rounds"] == 3


def test_rescore_reproduces_metrics(reference: Path, tmp_path: Path) -> None:
    import shutil

    from chateval.run.rescore import rescore

    copy = tmp_path / "copy"
    shutil.copytree(reference, copy)
    (copy / "metrics.json").unlink()
    rescore(copy)
    assert (copy / "metrics.json").read_bytes() == (reference / "metrics.json").read_bytes()


def test_a_journal_from_before_the_counters_were_split_still_resumes(tmp_path: Path) -> None:
    """Journals once counted ``backend_calls``; they now read as ``batches``."""
    from chateval.record.journal import load

    path = tmp_path / "journal.jsonl"
    usage = {"backend_calls": 2, "requests": 4, "prompt_tokens": 40, "completion_tokens": 8}
    path.write_text(json.dumps({"step_done": 0, "usage": {"smollm2-135m": usage}}) + "\n")
    counts = load(path).usage["smollm2-135m"]
    assert counts.batches == 2 and counts.engine_steps == 0 and counts.requests == 4
