"""Faults of a judgment store at the level of runs: a damaged entry is judged again with one
warning and mended, never poisoning the run; two runs sharing one store at once both finish
and leave it valid; a run killed with SIGKILL leaves what it finished, and its rerun resumes
and reuses to a clean run's results."""

import hashlib
import json
import logging
import multiprocessing
import os
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Sequence
from contextlib import closing
from multiprocessing.synchronize import Barrier
from pathlib import Path
from typing import Any

import pytest

from chateval.backends.scripted import StreamingScriptedBackend
from chateval.config.files import dump_config
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from chateval.store.judgments import STORE_FILE, JudgmentStore
from tests.run.test_judgment_store_runs import (
    assert_same_results,
    counts,
    item_config,
    judged,
    store_models_dir,
    systems_config,
    transcripts,
    write_systems,
)
from tests.support.helpers import ROOT
from tests.support.scripted import soft_checksum_referee


@pytest.fixture
def models_dir(tmp_path: Path) -> Path:
    return store_models_dir(tmp_path / "models")


def query(store: Path, statement: str, values: tuple[object, ...] = ()) -> list[Any]:
    """The rows of one statement on the store's file, as another process would run it."""
    with closing(sqlite3.connect(store / STORE_FILE, isolation_level=None)) as connection:
        return connection.execute(statement, values).fetchall()


def integrity(store: Path) -> str:
    return str(query(store, "PRAGMA integrity_check")[0][0])


def stored_keys(store: Path) -> list[str]:
    return [key for (key,) in query(store, "SELECT key FROM debates ORDER BY key")]


def store_keys_of(out: Path) -> dict[str, str]:
    """Debate key -> store key, of a run that reused every debate."""
    return {key: record["reused"]["key"] for key, record in transcripts(out).items()}


# A damaged entry ------------------------------------------------------------------------------


def flipped(payload: bytes) -> bytes:
    return payload[:10] + bytes([payload[10] ^ 0x20]) + payload[11:]


def truncated(payload: bytes) -> bytes:
    return payload[: len(payload) // 2]


DAMAGE = {"a flipped byte": flipped, "a truncated payload": truncated}


@pytest.mark.parametrize("damage", list(DAMAGE.values()), ids=list(DAMAGE))
def test_a_damaged_entry_is_judged_again_with_one_warning_and_mended(
    damage: Callable[[bytes], bytes], models_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store, clean = tmp_path / "store", tmp_path / "clean"
    judged(item_config(models_dir), clean, store)
    key, payload = query(store, "SELECT key, payload FROM debates ORDER BY key")[0]
    query(store, "UPDATE debates SET payload = ? WHERE key = ?", (damage(payload), key))
    assert_judged_again_once(key, models_dir, tmp_path, caplog)


def test_an_entry_true_to_its_digest_that_holds_no_utterances_is_judged_again(
    models_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Damage the digest cannot see (a payload rewritten with its digest): the run's reading of
    the utterances refuses it."""
    store = tmp_path / "store"
    judged(item_config(models_dir), tmp_path / "clean", store)
    payload = zlib.compress(json.dumps([{"speaker": "Critic"}]).encode())
    key = stored_keys(store)[0]
    digest = hashlib.sha256(payload).hexdigest()
    query(store, "UPDATE debates SET payload = ?, sha256 = ? WHERE key = ?", (payload, digest, key))
    assert_judged_again_once(key, models_dir, tmp_path, caplog)


def assert_judged_again_once(
    key: str, models_dir: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The run after entry ``key`` was damaged: one warning, that debate judged again (its 6
    requests), results equal to the clean run's, and the entry good again."""
    store, clean = tmp_path / "store", tmp_path / "clean"
    with caplog.at_level(logging.WARNING):
        _, requests = judged(item_config(models_dir), tmp_path / "after", store)
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "judgment store" in warnings[0] and "judged again" in warnings[0]
    assert len(requests) == 6 and counts(tmp_path / "after") == (1, 1)
    assert_same_results(tmp_path / "after", clean)
    assert integrity(store) == "ok" and len(stored_keys(store)) == 2
    with JudgmentStore(store) as opened:
        assert set(opened.get_many([key])) == {key}
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        _, requests = judged(item_config(models_dir), tmp_path / "mended", store)
    assert requests == [] and not caplog.records
    again = [k for k, r in transcripts(tmp_path / "after").items() if "reused" not in r]
    assert [store_keys_of(tmp_path / "mended")[k] for k in again] == [key]  # the damaged one


# Two runs on one store at once ----------------------------------------------------------------


class SlowReferee(StreamingScriptedBackend):
    """A streaming scripted engine that takes a little while per batch: two runs interleave."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        time.sleep(0.002)
        return super().generate(requests)


def run_slowly(config: RunConfig, out: Path, store: Path, start: Barrier) -> None:
    """A child process's run (``start``: a barrier both wait at, so that they overlap)."""
    start.wait()
    run(config, out, backends={DEFAULT_MODEL: SlowReferee(DEFAULT_MODEL, soft_checksum_referee)}, cache=store)


def test_two_runs_sharing_one_store_at_once_both_finish_and_leave_it_valid(
    models_dir: Path, tmp_path: Path
) -> None:
    config = systems_config(models_dir, write_systems(tmp_path / "data", prompts=2)).model_copy(
        update={"scheduling": "streaming"}
    )
    store = tmp_path / "store"
    context = multiprocessing.get_context("fork")  # the children inherit this process's imports
    start = context.Barrier(2)
    children = [
        context.Process(target=run_slowly, args=(config, tmp_path / name, store, start))
        for name in ("a", "b")
    ]
    for child in children:
        child.start()
    for child in children:
        child.join(timeout=60)
    assert [child.exitcode for child in children] == [0, 0]
    judged(config, tmp_path / "clean", False, streaming=True)
    for name in ("a", "b"):
        assert_same_results(tmp_path / name, tmp_path / "clean")
    assert integrity(store) == "ok"
    # A backend handed in is fingerprinted by its class: the same class as the two runs'.
    third = SlowReferee(DEFAULT_MODEL, soft_checksum_referee)
    run(config, tmp_path / "third", backends={DEFAULT_MODEL: third}, cache=store)
    assert third.calls == [] and stored_keys(store) == sorted(store_keys_of(tmp_path / "third").values())
    assert len(stored_keys(store)) == 12  # every debate once
    for name in ("a", "b"):
        assert sum(counts(tmp_path / name)) == 12


# SIGKILL mid-run, then the same command again -------------------------------------------------

# The child's run: the config file, the run folder and the store from argv; a scripted engine
# slow enough to be killed mid-run. It prints the requests it sent.
CHILD = """
import sys, time
from pathlib import Path
from chateval.backends.scripted import StreamingScriptedBackend
from chateval.config.files import load_config
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.scripted import soft_checksum_referee

class Slow(StreamingScriptedBackend):
    def generate(self, requests):
        time.sleep(0.02)
        return super().generate(requests)

backend = Slow(DEFAULT_MODEL, soft_checksum_referee)
config, out, store = load_config(Path(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3])
run(config, out, backends={DEFAULT_MODEL: backend}, cache=store)
print(sum(map(len, backend.calls)))
"""


def child_run(config_file: Path, out: Path, store: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", CHILD, str(config_file), str(out), str(store)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def entries(store: Path) -> int:
    if not (store / STORE_FILE).exists():
        return 0
    try:
        return len(stored_keys(store))
    except sqlite3.Error:  # the schema is not made yet
        return 0


@pytest.mark.slow  # two child processes that import chateval: seconds
def test_a_run_killed_with_sigkill_keeps_what_it_stored_and_its_rerun_resumes_to_a_clean_runs_results(
    models_dir: Path, tmp_path: Path
) -> None:
    config = systems_config(models_dir, write_systems(tmp_path / "data", prompts=4)).model_copy(
        update={"scheduling": "streaming"}
    )
    config_file = tmp_path / "config.yaml"
    config_file.write_text(dump_config(config))
    store, out = tmp_path / "store", tmp_path / "out"
    killed = child_run(config_file, out, store)
    deadline = time.monotonic() + 60
    while killed.poll() is None and entries(store) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert killed.poll() is None, f"the run ended before it could be killed: {killed.communicate()}"
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    kept = entries(store)
    assert 3 <= kept < 24 and integrity(store) == "ok" and not (out / "run.json").exists()

    rerun = child_run(config_file, out, store)
    stdout, stderr = rerun.communicate(timeout=120)
    assert rerun.returncode == 0, stderr
    # Neither the debates the journal finished nor those the store holds are judged again.
    assert 0 < int(stdout.split()[-1]) <= 6 * (24 - kept)
    judged(config, tmp_path / "clean", False, streaming=True)
    assert_same_results(out, tmp_path / "clean")
    assert integrity(store) == "ok" and len(stored_keys(store)) == 24
    assert sum(counts(out)) == 24
