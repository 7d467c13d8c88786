"""A real run killed with SIGKILL partway, then resumed, equals an uninterrupted run: the same
text byte for byte, the same score probabilities to float noise. Both processes run cut off
from the network where this machine allows it (tests/support/cut_off.py): the transformers
backend's part of the proof that nothing leaves the machine (tests/end_to_end/test_nothing_leaves.py)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.cut_off import cut_off, outbound, unavailable
from tests.support.helpers import CONFIGS_DIR, MODELS_DIR, assert_close, read_jsonl, tiny_config

pytestmark = pytest.mark.slow


def config_tree() -> dict[str, object]:
    return {
        "name": "killed",
        "task": "pairwise",
        "data": {
            "format": "jsonl_pairwise",
            "path": str(CONFIGS_DIR / "samples/quickstart_pairwise.jsonl"),
            "limit": 1,  # its two answer orders: two debates, each killed mid-way
        },
        "backend": "transformers",
        "strategy": "one_by_one",
        "rounds": 2,
        "agents": [{"role": "critic"}, {"role": "everyday_reader"}],
        "models_dir": str(MODELS_DIR),
        "sampling": {"discussion_max_tokens": 12, "summary_max_tokens": 12},
        "verdict": {"evidence_max_tokens": 6, "reasoning_max_tokens": 12},
    }


def chateval(trace: Path | None, *args: str) -> subprocess.Popen[bytes]:
    """``chateval ARGS`` in a session of its own; cut off from the network and traced into
    ``trace`` unless that is None."""
    command = [sys.executable, "-m", "chateval.cli", *args]
    return subprocess.Popen(
        command if trace is None else cut_off(command, trace),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its whole group is killed: the tracer with the run
    )


def test_sigkill_then_resume_is_byte_identical(transformers_backend: Backend, tmp_path: Path) -> None:
    config_path = tmp_path / "killed.yaml"
    config_path.write_text(yaml.safe_dump(config_tree()))
    reference = tmp_path / "reference"
    run(tiny_config(**config_tree()), reference, backends={DEFAULT_MODEL: transformers_backend})

    out = tmp_path / "out"
    journal = out / "journal.jsonl"
    traces = (
        [tmp_path / "killed.trace", tmp_path / "resumed.trace"] if unavailable() is None else [None, None]
    )
    process = chateval(traces[0], "run", str(config_path), "-o", str(out))
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if journal.exists() and journal.read_text().count('"step_done"') >= 2:
            break
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before it could be killed"
    os.killpg(process.pid, signal.SIGKILL)
    process.wait()
    assert not (out / "run.json").exists()

    resumed = chateval(traces[1], "run", str(config_path), "-o", str(out))
    assert resumed.wait(timeout=300) == 0
    for trace in traces:
        assert trace is None or outbound(trace) == []
    assert (out / "transcripts.jsonl").read_bytes() == (reference / "transcripts.jsonl").read_bytes()
    # Score probabilities come from forward passes that reuse kept KV caches in one process and
    # recompute them in the other: the same to float noise, not to the last digit.
    assert_close(read_jsonl(out / "verdicts.jsonl"), read_jsonl(reference / "verdicts.jsonl"))
    metrics = [json.loads((folder / "metrics.json").read_text()) for folder in (out, reference)]
    assert_close(*metrics)
