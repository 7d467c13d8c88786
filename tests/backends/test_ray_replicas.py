"""Engine replicas for real: a local Ray cluster with two 1-CPU nodes on this machine, two vLLM
(CPU build) actors of the default model, each pinned to its own core. A replica killed mid-run
ends the run; the same run then resumes on fresh replicas, both of which serve, later turns hit
each replica's prefix cache, and the greedy verdicts equal a one-engine run's. (One test:
each start of two replicas costs about 40 s on two cores.)

The cluster is started as a user's shell would start it, without chateval's settings (telemetry
on), its daemons' HTTP sent to a closed loopback port so that the test itself sends nothing: a
plain Ray worker there has vLLM's and Ray's telemetry on, one given the runtime environment
chateval gives its actors has both off."""

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from chateval.backends.ray_replicas import offline_runtime_env
from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from chateval.errors import BackendError
from chateval.offline import RAY_DAEMONS_HTTP_OFF
from chateval.run.runner import run
from tests.support.helpers import (
    CONFIGS_DIR,
    same_results,
    tiny_config,
    without_chateval_settings,
)
from tests.support.vllm_server import free_port

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")


@pytest.fixture(scope="module")
def cluster(registry: ModelRegistry, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Two Ray nodes of one CPU each on this machine, started with ``ray start`` as a user
    would; yields the cluster's address and stops it after."""
    pytest.importorskip("vllm")
    ray_cli = str(Path(sys.executable).parent / "ray")
    address = f"127.0.0.1:{free_port()}"
    # A clean HOME: a ~/.ray/auth_token left by another Ray session makes the head demand a
    # token that the second node's start does not send.
    home = tmp_path_factory.mktemp("ray_home")
    env = {**without_chateval_settings(home), **RAY_DAEMONS_HTTP_OFF}
    common = ["--num-cpus=1", "--node-ip-address=127.0.0.1"]
    head = [ray_cli, "start", "--head", f"--port={address.split(':')[1]}", "--include-dashboard=false"]
    node = [ray_cli, "start", f"--address={address}"]

    def start(command: list[str]) -> None:
        done = subprocess.run(command + common, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}"

    try:
        start(head)
        start(node)
        ray.init(address=address, log_to_driver=False)
        yield address
    finally:
        ray.shutdown()
        subprocess.run([ray_cli, "stop", "--force"], capture_output=True, timeout=120, env=env)


def test_the_cluster_has_telemetry_on_and_chateval_runtime_env_switches_it_off(cluster: str) -> None:
    def telemetry() -> list[bool]:
        """In a Ray worker (nested: Ray ships it by value), the libraries' own verdicts;
        without importing chateval, which would switch them off."""
        from ray._common.usage.usage_lib import usage_stats_enabled
        from vllm.usage.usage_lib import is_usage_stats_enabled

        return [is_usage_stats_enabled(), usage_stats_enabled()]

    probe = ray.remote(telemetry)
    assert ray.get(probe.remote(), timeout=120) == [True, True]
    switched = probe.options(runtime_env=offline_runtime_env())
    assert ray.get(switched.remote(), timeout=120) == [False, False]


def config(address: str, replicas: int = 2):  # noqa: ANN201
    return tiny_config(
        backend="vllm",
        data={
            "format": "jsonl_pairwise",
            "path": str(CONFIGS_DIR / "samples/quickstart_pairwise.jsonl"),
            "limit": 2,
        },
        scale={"replicas": replicas, "address": address},
    )


@pytest.fixture(scope="module")
def one_engine(vllm_backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("one")
    run(config("unused", replicas=1), out, backends={DEFAULT_MODEL: vllm_backend})
    return out


def test_replicas_decode_as_one_engine_and_a_killed_one_ends_the_run_which_resumes(
    cluster: str, one_engine: Path, tmp_path: Path
) -> None:
    from chateval.backends.ray_replicas import ACTOR_PREFIX

    temp = Path(tempfile.gettempdir())
    before = set(temp.glob("chateval-replicas-*"))
    failure: list[BaseException] = []

    def target() -> None:
        try:
            run(config(cluster), tmp_path)
        except BaseException as exc:  # noqa: BLE001 - handed to the test thread
            failure.append(exc)

    worker = threading.Thread(target=target)
    worker.start()
    journal = tmp_path / "journal.jsonl"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline and worker.is_alive():
        if journal.exists() and journal.read_text().count('"step_done"') >= 3:
            break
        time.sleep(0.2)
    actors = [
        a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith(ACTOR_PREFIX)
    ]
    victim = next(a for a in actors if a["name"].split("/")[2] == "1")
    ray.kill(ray.get_actor(victim["name"], namespace=victim["namespace"]))
    worker.join(timeout=300)
    assert failure and isinstance(failure[0], BackendError), failure
    assert "replica 1" in str(failure[0])
    assert not (tmp_path / "run.json").exists()

    run(config(cluster), tmp_path)  # the same run on fresh replicas
    same_results(tmp_path, one_engine)
    info = json.loads((tmp_path / "run.json").read_text())
    assert info["resumed"] is True and info["verdict_parse_failures"] == 0
    stats = info["replicas"][DEFAULT_MODEL]
    assert len(stats) == 2 and all(s["requests"] > 0 and s["items"] == 1 for s in stats)
    assert info["cached_prompt_tokens"] > 0  # later turns reuse each replica's prefix cache
    # The replicas' core slots (killed run and resumed one) left nothing in the temp folder.
    assert set(temp.glob("chateval-replicas-*")) == before
