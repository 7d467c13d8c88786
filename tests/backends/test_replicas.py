"""Replicas of one model behind one streaming backend, with scripted replicas in threads (no
model, no Ray): every turn of an item stays on one replica, results are collected from
whichever replica answers first, and a replica that dies ends the run with exit 1, after which
the same run resumes (on more or fewer replicas) to identical outputs. The real thing, vLLM
actors on a local Ray cluster, is tests/backends/test_ray_replicas.py."""

import concurrent.futures
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from chateval.backends.replicas import ReplicaSet, ReplicaWorker, StepReport, ThreadReplica, item_of
from chateval.backends.scripted import ScriptedBackend, StreamingScriptedBackend
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.errors import BackendError
from chateval.run.runner import run
from tests.support.helpers import prompt_dependent, quickstart_config

MODEL = "smollm2-135m"
OUTPUTS = ("transcripts.jsonl", "verdicts.jsonl", "metrics.json")


class RecordingWorker(ReplicaWorker):
    """A scripted replica that notes the items it was sent, and can be slow or die."""

    def __init__(self, delay_s: float = 0.0, dies_at_step: int | None = None) -> None:
        super().__init__(lambda: StreamingScriptedBackend(MODEL, prompt_dependent))
        self.items: set[str] = set()
        self.delay_s = delay_s
        self.dies_at_step = dies_at_step
        self.steps = 0

    def step(self, new: Sequence[tuple[str, GenerationRequest]]) -> StepReport:
        self.steps += 1
        if self.steps == self.dies_at_step:
            raise RuntimeError("actor died (simulated)")
        self.items.update(item_of(key) for key, _ in new)
        time.sleep(self.delay_s)
        return super().step(new)


def replica_set(workers: Sequence[ReplicaWorker], stall_timeout_s: float = 600.0) -> ReplicaSet:
    handles = [ThreadReplica(f"thread {i}", worker) for i, worker in enumerate(workers)]
    nodes = [f"node{i}" for i in range(len(workers))]
    return ReplicaSet(MODEL, handles, nodes, ScriptedBackend(MODEL, prompt_dependent), stall_timeout_s)


config = quickstart_config


@pytest.fixture
def reference(scripted_reference: Path) -> Path:
    return scripted_reference


def same_outputs(out: Path, reference: Path) -> None:
    for name in OUTPUTS:
        assert (out / name).read_bytes() == (reference / name).read_bytes(), name


def test_items_never_change_replica_and_results_equal_one_engine(reference: Path, tmp_path: Path) -> None:
    workers = [RecordingWorker() for _ in range(3)]
    replicas = replica_set(workers)
    result = run(config(), tmp_path, backends={MODEL: replicas})
    same_outputs(tmp_path, reference)
    homes = [w.items for w in workers]
    assert all(homes) and not (homes[0] & homes[1] or homes[0] & homes[2] or homes[1] & homes[2])
    assert sum(map(len, homes)) == 12  # both answer orders of an item on its one replica
    stats = json.loads((tmp_path / "run.json").read_text())["replicas"][MODEL]
    assert [s["items"] for s in stats] == [4, 4, 4] and [s["node"] for s in stats] == [
        "node0",
        "node1",
        "node2",
    ]
    assert sum(s["requests"] for s in stats) == result.run_info["requests"]
    assert sum(s["generated_tokens"] for s in stats) == result.run_info["generated_tokens"]
    assert all(s["busy_seconds"] > 0 and s["engine_steps"] > 0 for s in stats)


def test_results_are_collected_from_whichever_replica_answers_first() -> None:
    slow, fast = RecordingWorker(delay_s=0.5), RecordingWorker()
    replicas = replica_set([slow, fast])
    request = GenerationRequest(MODEL, (), max_tokens=4)
    replicas.submit("a\x1f0\x1f0", request)  # item a -> replica 0 (slow)
    replicas.submit("b\x1f0\x1f1", request)  # item b -> replica 1 (fast)
    arrived: list[str] = []
    deadline = time.monotonic() + 5
    while len(arrived) < 2 and time.monotonic() < deadline:
        replicas.wait(1.0)
        arrived += [key for key, _ in replicas.poll()]
    assert arrived == ["b\x1f0\x1f1", "a\x1f0\x1f0"]
    replicas.close()


@pytest.mark.parametrize("replicas_after", [1, 2, 4])
def test_a_dead_replica_ends_the_run_and_it_resumes_to_identical_results(
    reference: Path, tmp_path: Path, replicas_after: int
) -> None:
    dying = replica_set([RecordingWorker(), RecordingWorker(dies_at_step=6)])
    with pytest.raises(
        BackendError, match=r"replica 1 \(thread 1, node node1\) failed: RuntimeError: actor died"
    ):
        run(config(), tmp_path, backends={MODEL: dying})
    assert '"step_done"' in (tmp_path / "journal.jsonl").read_text()  # what finished is on disk
    assert not (tmp_path / "run.json").exists()
    run(config(), tmp_path, backends={MODEL: replica_set([RecordingWorker() for _ in range(replicas_after)])})
    same_outputs(tmp_path, reference)


def test_replicas_need_streaming_and_a_used_model() -> None:
    from chateval.errors import ConfigError

    with pytest.raises(ConfigError, match="scheduling: barrier cannot use them"):
        config(scheduling="barrier", scale={"replicas": 2})
    with pytest.raises(ConfigError, match=r"scale.models: no agent uses model\(s\) llama"):
        config(scale={"models": {"llama": 2}})
    assert config(scale={"replicas": 2, "models": {MODEL: 1}}).replicated_models() == []


def test_a_batch_backend_replica_answers_in_one_step() -> None:
    worker = ReplicaWorker(lambda: ScriptedBackend(MODEL, prompt_dependent))
    request = GenerationRequest(MODEL, (), max_tokens=4)
    report = worker.step([("x\x1f0\x1f0", request)])
    assert [key for key, _ in report.finished] == ["x\x1f0\x1f0"]
    assert isinstance(report.finished[0][1], GenerationResult)


def test_requests_submitted_together_travel_in_one_call() -> None:
    sizes: list[int] = []

    class Counting(RecordingWorker):
        def step(self, new: Sequence[tuple[str, GenerationRequest]]) -> StepReport:
            sizes.append(len(new))
            return super().step(new)

    replicas = replica_set([Counting()])
    request = GenerationRequest(MODEL, (), max_tokens=4)
    for slot in range(3):
        replicas.submit(f"a\x1f{slot}\x1f{slot}", request)
    done: list[str] = []
    while len(done) < 3:
        replicas.wait(1.0)
        done += [key for key, _ in replicas.poll()]
    assert sizes[0] == 3
    replicas.close()


class NeverFinishes(StreamingScriptedBackend):
    """An engine that takes requests and finishes none (a generation longer than any step)."""

    def poll(self) -> list[tuple[str, GenerationResult]]:
        time.sleep(0.01)
        return []


def test_a_replica_answers_every_few_seconds_even_when_nothing_finished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from chateval.backends import replicas

    monkeypatch.setattr(replicas, "_STEP_MAX_S", 0.1)
    worker = ReplicaWorker(lambda: NeverFinishes(MODEL, prompt_dependent))
    request = GenerationRequest(model=MODEL, messages=(), max_tokens=8)
    started = time.perf_counter()
    report = worker.step([("q1\x1f0\x1f0", request)])
    assert report.finished == [] and 0.1 <= time.perf_counter() - started < 1.0
    assert worker.pending == {"q1\x1f0\x1f0"}  # still running, answered next time


class HungReplica:
    """A replica whose step call never answers (a hung engine, a frozen node)."""

    name = "hung"

    def step(self, new: list[tuple[str, GenerationRequest]]) -> "concurrent.futures.Future[StepReport]":
        return concurrent.futures.Future()

    def close(self) -> None:
        pass


def test_a_replica_that_stops_answering_fails_the_run(tmp_path: Path) -> None:
    healthy = ThreadReplica("thread 0", RecordingWorker())
    replicas = ReplicaSet(
        MODEL, [healthy, HungReplica()], ["node0", "node1"], ScriptedBackend(MODEL, prompt_dependent), 0.3
    )
    started = time.perf_counter()
    with pytest.raises(BackendError, match=r"replica 1 \(hung, node node1\) has not answered for 0.3 s"):
        run(config(), tmp_path, backends={MODEL: replicas})
    assert time.perf_counter() - started < 10


def test_replicas_starting_together_on_a_node_take_distinct_core_slots() -> None:
    from chateval.backends.ray_replicas import node_slot

    with concurrent.futures.ThreadPoolExecutor(max_workers=8) as pool:
        taken = list(pool.map(lambda _: node_slot("run1"), range(8)))
    assert sorted(slot for slot, _ in taken) == list(range(8))
    assert node_slot("run2")[0] == 0  # another run counts its own replicas
    for _, holder in taken:
        holder.close()


def test_a_core_slot_leaves_nothing_behind_and_frees_itself_when_its_process_dies(tmp_path: Path) -> None:
    """A slot is a name in the kernel, held by a socket, not a file: nothing in the temp
    folder while it is held, and a replica killed with SIGKILL frees its slot for the next."""
    from chateval.backends.ray_replicas import node_slot

    before = set(Path(tempfile.gettempdir()).glob("chateval-replicas-*"))
    holder = (
        "import sys, time\n"
        "from chateval.backends.ray_replicas import node_slot\n"
        "slot, held = node_slot('killed')\n"
        "print(slot, flush=True)\n"
        "time.sleep(600)\n"
    )
    replica = subprocess.Popen([sys.executable, "-c", holder], stdout=subprocess.PIPE, text=True)
    try:
        assert replica.stdout is not None and replica.stdout.readline().strip() == "0"
        slot, held = node_slot("killed")
        assert slot == 1  # the live one holds 0
        held.close()
        assert set(Path(tempfile.gettempdir()).glob("chateval-replicas-*")) == before
    finally:
        replica.send_signal(signal.SIGKILL)
        replica.wait(timeout=30)
    slot, held = node_slot("killed")
    assert slot == 0  # freed by the kernel when the process died
    held.close()


def test_a_killed_commands_local_ray_folder_is_removed_by_the_next_and_nothing_else(tmp_path: Path) -> None:
    """The next local Ray instance removes the folder of one whose command was killed (its
    owner lock free), and keeps a running command's (lock held), a folder without the lock
    (not provably chateval's) and anything not named chateval-ray-*."""
    from chateval.backends.ray_replicas import private_ray_folder, remove_abandoned_ray_folders

    owner = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from chateval.backends.ray_replicas import private_ray_folder\n"
        "print(private_ray_folder(Path(sys.argv[1]))[0], flush=True)\n"
        "time.sleep(600)\n"
    )
    commands = [
        subprocess.Popen([sys.executable, "-c", owner, str(tmp_path)], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    try:
        killed, running = (Path(c.stdout.readline().strip()) for c in commands if c.stdout is not None)
        (killed / "ray" / "session_x").mkdir(parents=True)
        commands[0].send_signal(signal.SIGKILL)
        commands[0].wait(timeout=30)
        unlocked = tmp_path / "chateval-ray-older"
        unlocked.mkdir()
        other = tmp_path / "someone-else"
        other.mkdir()
        ours, held = private_ray_folder(tmp_path)  # this process's, as a run would hold it
        assert remove_abandoned_ray_folders(tmp_path) == [killed]
        assert {p.name for p in tmp_path.iterdir()} == {running.name, unlocked.name, other.name, ours.name}
    finally:
        for command in commands:
            command.kill()
            command.wait(timeout=30)
    os.close(held)
    assert remove_abandoned_ray_folders(tmp_path) == sorted([ours, running])
