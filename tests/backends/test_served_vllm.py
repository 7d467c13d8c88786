"""A real vLLM server (the CPU build, the default model) on a loopback port, started and stopped
here: a served debate decodes exactly as the offline engine does, a served and an offline
referee share a panel, and a server killed mid-run ends the run with exit 1 and the same
command, once the server is back, resumes to the same result."""

import json
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from chateval.config.files import dump_config
from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL, ModelRegistry
from chateval.run.runner import run
from tests.support.helpers import CONFIGS_DIR, MODELS_DIR, same_results, tiny_config
from tests.support.vllm_server import VllmServer, free_port

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server(registry: ModelRegistry, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VllmServer]:
    pytest.importorskip("vllm")
    log = tmp_path_factory.mktemp("server") / "vllm-server.log"
    served = VllmServer(MODELS_DIR / DEFAULT_MODEL, DEFAULT_MODEL, free_port(), log)
    served.start()
    yield served
    served.stop()


@pytest.fixture(scope="module")
def models_dir(server: VllmServer, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry with ``served`` (the default model on the server; its local folder gives the
    tokenizer for exact counts and soft verdicts) and the default model offline."""
    folder = tmp_path_factory.mktemp("registry")
    entry = {
        "path": str(MODELS_DIR / DEFAULT_MODEL),
        "max_model_len": 8192,
        "backend": "openai",
        # Few, quick retries: the killed server must end the run within seconds.
        "server": {"base_url": server.base_url, "model": DEFAULT_MODEL, "max_retries": 2, "backoff_s": 0.5},
    }
    offline = {"path": str(MODELS_DIR / DEFAULT_MODEL), "max_model_len": 8192}
    (folder / "registry.yaml").write_text(yaml.safe_dump({"served": entry, DEFAULT_MODEL: offline}))
    return folder


def config_tree(models_dir: Path, models: tuple[str, str] = ("served", "served")) -> dict[str, object]:
    """The quickstart's debate (one-by-one, two rounds, reasoned verdicts) over two items."""
    return {
        "name": "served",
        "task": "pairwise",
        "data": {
            "format": "jsonl_pairwise",
            "path": str(CONFIGS_DIR / "samples/quickstart_pairwise.jsonl"),
            "limit": 2,
        },
        "backend": "vllm",
        "strategy": "one_by_one",
        "rounds": 2,
        "agents": [{"role": "critic", "model": models[0]}, {"role": "everyday_reader", "model": models[1]}],
        "models_dir": str(models_dir),
        "sampling": {"discussion_max_tokens": 32},
        "verdict": {"reasoning": True, "reasoning_max_tokens": 32},
    }


@pytest.fixture(scope="module")
def offline_run(vllm_backend: Backend, models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same debate on the offline engine (loaded once per test session)."""
    out = tmp_path_factory.mktemp("offline")
    config = tiny_config(**config_tree(models_dir, (DEFAULT_MODEL, DEFAULT_MODEL)))
    run(config, out, backends={DEFAULT_MODEL: vllm_backend})
    return out


@pytest.fixture(scope="module")
def served_run(server: VllmServer, models_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("served")
    run(tiny_config(**config_tree(models_dir)), out)
    return out


def test_a_served_debate_decodes_as_the_offline_engine_does(served_run: Path, offline_run: Path) -> None:
    same_results(served_run, offline_run)
    served, offline = (json.loads((d / "run.json").read_text()) for d in (served_run, offline_run))
    for key in ("requests", "prompt_tokens", "generated_tokens", "verdict_parse_failures"):
        assert served[key] == offline[key], key
    assert served["verdict_parse_failures"] == 0
    assert served["cached_prompt_tokens"] > 0  # the server's prefix cache, as it reports it
    assert served["engine_steps"] == 0  # a server's steps are its own


def test_served_and_offline_referees_share_a_panel(
    vllm_backend: Backend, models_dir: Path, offline_run: Path, tmp_path: Path
) -> None:
    # Step barriers: one engine computes at a time. Streamed, the server's engine and this
    # process's would share the two cores of a CI machine and each run three times slower;
    # streaming across a served and a local model is tested against a fake server
    # (tests/backends/test_openai_backend.py).
    tree = config_tree(models_dir, (DEFAULT_MODEL, "served")) | {"scheduling": "barrier"}
    config = tiny_config(**tree)
    run(config, tmp_path, backends={DEFAULT_MODEL: vllm_backend})
    same_results(tmp_path, offline_run)
    usage = json.loads((tmp_path / "run.json").read_text())["per_model"]
    assert usage["served"]["requests"] > 0 and usage[DEFAULT_MODEL]["requests"] > 0


def test_a_server_killed_mid_run_ends_it_with_exit_1_and_it_resumes(
    server: VllmServer, models_dir: Path, served_run: Path, tmp_path: Path
) -> None:
    config_file = tmp_path / "served.yaml"
    config_file.write_text(dump_config(tiny_config(**config_tree(models_dir))))
    out = tmp_path / "out"
    command = [sys.executable, "-m", "chateval.cli", "run", str(config_file), "-o", str(out)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    journal = out / "journal.jsonl"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and process.poll() is None:
        if journal.exists() and journal.read_text().count('"step_done"') >= 4:
            break
        time.sleep(0.2)
    assert process.poll() is None, "the run ended before the server could be killed"
    server.stop(signal.SIGKILL)
    output, _ = process.communicate(timeout=120)
    assert process.returncode == 1, output.decode()
    assert "run the same command again to resume" in output.decode()
    assert not (out / "run.json").exists()

    server.start()
    finished = subprocess.run(command, capture_output=True, timeout=600)
    assert finished.returncode == 0, finished.stdout.decode() + finished.stderr.decode()
    assert json.loads((out / "run.json").read_text())["resumed"] is True
    same_results(out, served_run)
