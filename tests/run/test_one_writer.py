"""A run folder under one hand, command by command: a run (new or resumed), a rescore, an import
and a sweep into a folder another process writes are refused at once (before any model loads,
exit 2, one line naming the holder) and write nothing; readers are never blocked; the lock is
gone when a run ends, normally or not; a journal left by two writers at once resumes when
their copies of a step agree, and is refused, naming both lines, when they do not."""

import json
import logging
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from chateval.backends.scripted import ScriptedBackend
from chateval.cli import app
from chateval.config.run import RunConfig
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from chateval.errors import BackendError, DataError
from chateval.record.files import RunFolder
from chateval.record.lock import RunFolderBusy
from chateval.run.runner import run
from chateval.run.sweep import run_sweep
from tests.support.helpers import (
    CONFIGS_DIR,
    MODELS_DIR,
    export_stdout,
    prompt_dependent,
    quickstart_config,
)
from tests.support.lock_holder import held_elsewhere
from tests.support.scripted import DiesAtCall

OUTPUTS = ("transcripts.jsonl", "verdicts.jsonl", "metrics.json")
QUICKSTART_DATA = CONFIGS_DIR / "samples" / "quickstart_pairwise.jsonl"
runner = CliRunner()


def scripted() -> dict[str, ScriptedBackend]:
    return {DEFAULT_MODEL: ScriptedBackend(DEFAULT_MODEL, prompt_dependent)}


def killed_at_step_3(folder: Path) -> None:
    """An unfinished run in ``folder``: its engine died at its third step (two journaled)."""
    with pytest.raises(BackendError):
        run(
            quickstart_config(),
            folder,
            backends={DEFAULT_MODEL: DiesAtCall(DEFAULT_MODEL, prompt_dependent, 3)},
        )
    assert not RunFolder(folder).lock.exists()  # gone after the failure too


def refusal(folder: Path, pid: int, command: str = "chateval run") -> str:
    """How a refusal begins: the folder, and who holds it."""
    return f"{folder} is being written by `{command}`, pid {pid} on host {socket.gethostname()}, since "


def test_a_run_and_its_resume_are_refused_before_any_model_loads(tmp_path: Path) -> None:
    loads: list[str] = []

    def factory(config: RunConfig, model: str) -> ScriptedBackend:
        loads.append(model)
        return ScriptedBackend(model, prompt_dependent)

    new, unfinished = tmp_path / "new", tmp_path / "unfinished"
    killed_at_step_3(unfinished)
    journal = RunFolder(unfinished).journal.read_bytes()
    for folder in (new, unfinished):
        with held_elsewhere(folder) as holder:
            with pytest.raises(RunFolderBusy) as refused:
                run(quickstart_config(), folder, backend_factory=factory)
            assert str(refused.value).startswith(refusal(folder, holder.pid)) and loads == []
    assert sorted(p.name for p in new.iterdir()) == []  # nothing written, the lock gone with its holder
    assert RunFolder(unfinished).journal.read_bytes() == journal
    run(quickstart_config(), unfinished, backend_factory=factory)  # once the holder is gone: resumed
    assert RunFolder(unfinished).finished() and not RunFolder(unfinished).lock.exists()


def test_rescore_and_import_into_a_held_folder_exit_2_in_one_line(tmp_path: Path) -> None:
    folder, copy = tmp_path / "run", tmp_path / "copy"
    run(quickstart_config(), folder, backends=scripted())
    assert not RunFolder(folder).lock.exists()  # gone after a normal end
    metrics = RunFolder(folder).metrics.read_bytes()
    generic = CONFIGS_DIR / "import" / "generic_pairwise.yaml"
    with held_elsewhere(folder) as holder:
        for args in (["rescore", str(folder)], ["import", str(generic), "-o", str(folder), "--force"]):
            result = runner.invoke(app, args)
            assert result.exit_code == 2, result.output
            (line,) = result.output.splitlines()
            assert line.startswith("error: " + refusal(folder, holder.pid)), line
    assert RunFolder(folder).metrics.read_bytes() == metrics  # the refused wrote nothing
    with held_elsewhere(copy, "chateval rescore") as holder:
        result = runner.invoke(app, ["rescore", str(folder), "--label-fraction", "0.5", "--into", str(copy)])
        assert result.exit_code == 2 and refusal(copy, holder.pid, "chateval rescore") in result.output
    assert sorted(p.name for p in copy.iterdir()) == []


def test_readers_are_not_blocked_by_a_writer(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    run(quickstart_config(), folder, backends=scripted())
    with held_elsewhere(folder):
        result = runner.invoke(app, ["report", str(folder), "-o", str(tmp_path / "report")])
        assert result.exit_code == 0, result.output
        assert export_stdout(folder).count("\n") == 25  # a header and 12 items in two orders
        assert RunFolder(folder).lock.is_file()  # still the holder's


def test_a_sweep_refuses_before_loading_any_model(tmp_path: Path) -> None:
    loads: list[str] = []

    def factory(config: RunConfig, model: str) -> ScriptedBackend:
        loads.append(model)
        return ScriptedBackend(model, prompt_dependent)

    configs = []
    for name in ("first", "second"):
        configs.append(tmp_path / f"{name}.yaml")
        configs[-1].write_text(f"extends: {CONFIGS_DIR / 'quickstart.yaml'}\nname: {name}\nrounds: 1\n")
    root = tmp_path / "runs"
    with held_elsewhere(root / "second") as holder, pytest.raises(RunFolderBusy) as refused:
        run_sweep(configs, root, backend_factory=factory)
    assert str(refused.value).startswith(refusal(root / "second", holder.pid))
    assert loads == [] and not (root / "first").exists()  # refused before any config was opened
    assert [r.run_info["name"] for r in run_sweep(configs, root, backend_factory=factory)] == [
        "first",
        "second",
    ]
    assert not RunFolder(root / "first").lock.exists() and not RunFolder(root / "second").lock.exists()


def doubled(folder: Path, change: str | None = None) -> list[str]:
    """The journal of ``folder`` with its steps written twice, as two runs at once left it (the
    second copy's first utterance ``change``d); its lines as they were."""
    path = RunFolder(folder).journal
    lines = path.read_text().splitlines(keepends=True)
    header, steps = lines[:1], lines[1:]
    copy = list(steps)
    if change is not None:
        copy[0] = json.dumps(json.loads(copy[0]) | {"text": change}) + "\n"
    path.write_text("".join(header + steps + copy))
    return lines


def test_a_journal_with_steps_written_twice_alike_resumes_and_says_so(
    scripted_reference: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    killed_at_step_3(tmp_path)
    lines = doubled(tmp_path)
    marks = [n for n, line in enumerate(lines, 1) if '"step_done"' in line]
    caplog.set_level(logging.WARNING, "chateval")
    run(quickstart_config(), tmp_path, backends=scripted())
    (warning,) = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    copies = len(lines) - 1
    assert warning == (
        f"{RunFolder(tmp_path).journal}: 2 record(s) written twice alike (two runs wrote this folder at "
        f"once?): the second copies are dropped (first: step 0, lines {marks[0]} and {marks[0] + copies})"
    )
    for name in OUTPUTS:
        assert (tmp_path / name).read_bytes() == (scripted_reference / name).read_bytes(), name
    journal = RunFolder(tmp_path).journal.read_text()
    assert journal.startswith("".join(lines)) and journal.count('"step_done"') == 6  # the copies gone


def test_a_journal_with_a_step_written_twice_differently_is_refused(tmp_path: Path) -> None:
    killed_at_step_3(tmp_path)
    lines = doubled(tmp_path, change="something else")
    first = next(n for n, line in enumerate(lines, 1) if '"step_done"' in line)
    with pytest.raises(DataError) as refused:
        run(quickstart_config(), tmp_path, backends=scripted())
    assert str(refused.value) == (
        f"{RunFolder(tmp_path).journal}: step 0 is marked done twice, with different utterances "
        f"(lines {first} and {first + len(lines) - 1}); pass --force to start over"
    )


@pytest.mark.slow
def test_two_real_runs_into_one_folder(registry: ModelRegistry, tmp_path: Path) -> None:
    """The issue's case: a second `chateval run` with the same -o while the first runs is refused
    at once (exit 2, one line naming the first, no model loaded); the first finishes unaffected."""
    config = tmp_path / "two.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "two",
                "task": "pairwise",
                # Enough work that the first run is still debating when the second has started
                # (a Python start-up, about 6 s on 2 cores), on any machine of this kind.
                "data": {"format": "jsonl_pairwise", "path": str(QUICKSTART_DATA), "limit": 3},
                "backend": "transformers",
                "position_calibration": False,
                "rounds": 1,
                "agents": [{"role": "critic"}, {"role": "everyday_reader"}],
                "models_dir": str(MODELS_DIR),
                "sampling": {"discussion_max_tokens": 32, "summary_max_tokens": 12},
                "verdict": {"evidence_max_tokens": 6, "reasoning_max_tokens": 12},
            }
        )
    )
    out = tmp_path / "out"
    command = [sys.executable, "-m", "chateval.cli", "run", str(config), "-o", str(out)]
    first = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lock = RunFolder(out).lock
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and first.poll() is None:
        if lock.is_file() and f'"pid": {first.pid},' in lock.read_text():
            break
        time.sleep(0.05)
    assert first.poll() is None, "the first run ended before the second started"
    second = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert second.returncode == 2 and second.stdout == ""
    (line,) = second.stderr.splitlines()  # no "loading" line: refused before the model loads
    assert line.startswith("error: " + refusal(out, first.pid)), line
    assert first.poll() is None, "the first run ended before the second was refused"
    _, errors = first.communicate(timeout=600)
    assert first.returncode == 0, errors
    assert "taking over" not in errors and "twice" not in errors
    files = RunFolder(out)
    assert files.finished() and not lock.exists()
    assert files.journal.read_text().count('"step_done"') == json.loads(files.info.read_text())["steps"]
