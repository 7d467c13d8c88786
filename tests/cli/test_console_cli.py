"""The quickstart through the CLI on vLLM, as a user runs it: a quiet console (chateval's lines,
one bar, the summary), the engine's output in engine.log, on the console with --verbose, and an
engine's error on the console when it fails. The quiet run is cut off from the network where
this machine allows it (tests/support/cut_off.py): the quickstart's part of the proof that
nothing leaves the machine, its transcripts equal to the same run outside
(tests/end_to_end/test_nothing_leaves.py)."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from chateval.config.files import load_config
from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from chateval.prompts.builder import role_library
from chateval.record.files import RunFolder
from chateval.record.roster import folder_fingerprint
from chateval.run.runner import run
from tests.support.cut_off import outbound, run_cut_off, unavailable
from tests.support.helpers import CONFIGS_DIR, ROOT

pytestmark = pytest.mark.slow
QUICKSTART = CONFIGS_DIR / "quickstart.yaml"

# What vLLM, torch and Python print while an engine loads and runs (never chateval's own lines).
ENGINE_LINES = re.compile(
    r"non-default args|Triton|LD_PRELOAD|Passing raw prompts|Loading safetensors|FutureWarning"
    r"|(INFO|WARNING) \d\d-\d\d \d\d:|^\[W\d{4}|pid=\d+\)",
    re.MULTILINE,
)
# Two items and short turns: the run is about the console, not the verdicts.
SMALL = [
    "data.limit=2",
    "sampling.discussion_max_tokens=12",
    "verdict.reasoning_max_tokens=12",
    "verdict.evidence_max_tokens=6",
]
# An engine argument vLLM takes by name but cannot start with.
IMPOSSIBLE = "vllm.engine_args.smollm2-135m.max_num_batched_tokens=1"


def chateval_run(out: Path, *options: str, trace: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The quickstart, made small, through the CLI; cut off and traced into ``trace`` if given."""
    command = [sys.executable, "-m", "chateval.cli", "run", str(QUICKSTART)]
    command += ["-o", str(out), "--force", *(f"--set={o}" for o in SMALL), *options]
    if trace is not None:
        return run_cut_off(command, trace, timeout=600, cwd=ROOT)
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)


@pytest.fixture(scope="module")
def quickstart(registry: ModelRegistry, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    pytest.importorskip("vllm")
    out = tmp_path_factory.mktemp("quickstart")
    trace = None if unavailable() else out.parent / "quickstart.trace"
    done = chateval_run(out, trace=trace)
    assert done.returncode == 0, done.stdout + done.stderr
    assert trace is None or outbound(trace) == []
    return out, done.stdout, done.stderr


def test_the_quickstart_cut_off_decodes_as_it_does_outside(
    quickstart: tuple[Path, str, str], vllm_backend: Backend, tmp_path: Path
) -> None:
    run(load_config(QUICKSTART, SMALL), tmp_path, backends={DEFAULT_MODEL: vllm_backend})
    assert (quickstart[0] / "transcripts.jsonl").read_bytes() == (tmp_path / "transcripts.jsonl").read_bytes()


def test_the_quickstart_roster_names_the_model_folder_and_its_fingerprint(
    quickstart: tuple[Path, str, str], registry: ModelRegistry
) -> None:
    roster = json.loads(RunFolder(quickstart[0]).roster.read_text())
    model = roster["models"][DEFAULT_MODEL]
    folder = registry.folder(DEFAULT_MODEL)
    assert model["backend"] == "vllm" and model["path"] == str(folder)
    assert model["fingerprint"] == folder_fingerprint(folder) and model["fingerprint"].startswith("sha256:")
    assert [r["role"] for r in roster["referees"]] == ["Critic", "Everyday Reader"]
    assert roster["referees"][0]["role_text"] == role_library()["critic"].description


def test_the_quickstart_console_shows_chatevals_lines_and_the_engine_writes_engine_log(
    quickstart: tuple[Path, str, str],
) -> None:
    out, summary, console = quickstart
    assert not ENGINE_LINES.search(console), console
    assert not ENGINE_LINES.search(summary), summary
    # The summary goes to stdout; everything else fits a screen, with one bar's last state.
    assert len(console.splitlines()) <= 40, console
    assert "loading model smollm2-135m" in console
    last_bar = r"^debates 4/4, steps 24/24 \(100%\), 24 requests, .* done$"
    assert re.search(last_bar, console, re.MULTILINE), console
    assert "chateval run: quickstart" in summary
    log = RunFolder(out).engine_log.read_text()
    assert "non-default args" in log and "Initializing a V1 LLM engine" in log


@pytest.mark.parametrize("verbose", [False, True], ids=["quiet", "verbose"])
def test_a_failing_engine_shows_its_error_on_the_console(
    registry: ModelRegistry, tmp_path: Path, verbose: bool
) -> None:
    pytest.importorskip("vllm")
    done = chateval_run(tmp_path, f"--set={IMPOSSIBLE}", *(["--verbose"] if verbose else []))
    assert done.returncode == 1, done.stdout + done.stderr
    console = done.stderr
    assert "max_num_batched_tokens (1) must be greater than or equal to max_num_seqs" in console
    if verbose:  # the engine's own lines as they come (vLLM logs to stdout), no engine.log
        assert "non-default args" in done.stdout and "last lines of" not in console
        assert not RunFolder(tmp_path).engine_log.exists()
    else:  # the engine log's last lines, then chateval's error
        tail = console.index(f"last lines of {RunFolder(tmp_path).engine_log}:")
        assert console.index("non-default args", tail) < console.index("error: vLLM could not load")
