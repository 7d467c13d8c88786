"""Nothing leaves the machine: real runs inside a network namespace that has only loopback,
every connection attempt of every process traced (tests/support/cut_off.py), give zero
attempts to any other address and the same transcripts as the run outside. Here: the
quickstart on two vLLM replicas of a local Ray instance, and the docs' ``vllm serve``
command answering a request over loopback. The quickstart on vLLM in the CLI's own process:
tests/cli/test_console_cli.py; the heterogeneous quickstart, two models loaded, released and
loaded again: tests/end_to_end/test_hetero_models.py; the transformers backend:
tests/run/test_kill_resume.py (killed and resumed, both cut off, equal to the run outside).

Telemetry is also checked where no CPU run reaches it: vLLM reports usage only from its GPU
worker, so the processes chateval starts are asked for vLLM's and Ray's own verdicts."""

import json
import re
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from chateval.config.files import load_config
from chateval.core.backend import Backend
from chateval.engines.models import DEFAULT_MODEL
from chateval.run.runner import run
from tests.support.cut_off import cut_off, loopback_calls, outbound, run_cut_off, unavailable
from tests.support.helpers import (
    CONFIGS_DIR,
    ROOT,
    same_results,
    without_chateval_settings,
)
from tests.support.vllm_server import STARTUP_TIMEOUT_S

QUICKSTART = CONFIGS_DIR / "quickstart.yaml"
# The quickstart's first two items in both orders, one round, short turns: what the namespace
# changes is whether anything leaves, not what the referees say at length.
SMALL = ["data.limit=2", "rounds=1", "sampling.discussion_max_tokens=16", "verdict.reasoning_max_tokens=16"]


@pytest.fixture(scope="module")
def namespace() -> None:
    reason = unavailable()
    if reason:
        pytest.skip(reason)


def test_the_trace_sees_every_attempt_to_leave(namespace: None, tmp_path: Path) -> None:
    """The detector itself: a TCP connect and a child process's UDP datagram to documentation
    addresses are caught, a loopback connect is not."""
    probe = (
        "import socket, subprocess, sys\n"
        "for target in (('192.0.2.1', 9), ('127.0.0.1', 9)):\n"
        "    try: socket.create_connection(target, timeout=1)\n"
        "    except OSError: pass\n"
        "child = 'import socket\\ns = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)\\n"
        'try: s.sendto(b"x", ("2001:db8::1", 9))\\nexcept OSError: pass\'\n'
        "subprocess.run([sys.executable, '-c', child], check=True)\n"
    )
    trace = tmp_path / "trace"
    done = run_cut_off([sys.executable, "-c", probe], trace, timeout=60)
    assert done.returncode == 0, done.stderr
    caught = outbound(trace)
    assert len(caught) == 2
    assert '"192.0.2.1"' in caught[0] and '"2001:db8::1"' in caught[1]
    assert loopback_calls(trace) == 1


@pytest.mark.slow  # imports vLLM in two processes
def test_chateval_switches_telemetry_off_in_the_processes_it_starts(tmp_path: Path) -> None:
    """From a user's shell (none of the settings): importing chateval switches vLLM's and Ray's
    usage statistics off in its process and in a spawned child (as vLLM starts its engine
    core); without chateval both libraries say they are on."""
    pytest.importorskip("vllm")
    pytest.importorskip("ray")
    probe = (
        "import json, multiprocessing\n"
        "import vllm.usage.usage_lib as vllm_usage\n"
        "from ray._common.usage.usage_lib import usage_stats_enabled\n"
        "def verdict(_=None):\n"
        "    vllm_usage._USAGE_STATS_ENABLED = None  # vLLM keeps its first answer\n"
        "    return [vllm_usage.is_usage_stats_enabled(), usage_stats_enabled()]\n"
        "if __name__ == '__main__':\n"
        "    plain = verdict()\n"
        "    import chateval\n"
        "    with multiprocessing.get_context('spawn').Pool(1) as pool:\n"
        "        print(json.dumps([plain, verdict(), pool.apply(verdict, (0,))]))\n"
    )
    script = tmp_path / "probe.py"  # spawn needs a module file to import in the child
    script.write_text(probe)
    env = without_chateval_settings(tmp_path)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    plain, switched, child = json.loads(done.stdout.splitlines()[-1])
    assert plain == [True, True]  # before chateval: both would report
    assert switched == child == [False, False]


@pytest.fixture(scope="module")
def reference(vllm_backend: Backend, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small quickstart run in this process, outside any namespace."""
    out = tmp_path_factory.mktemp("outside")
    run(load_config(QUICKSTART, SMALL), out, backends={DEFAULT_MODEL: vllm_backend})
    return out


def run_quickstart_cut_off(out: Path, trace: Path, *extra: str) -> None:
    """The quickstart command, made small, cut off from the network."""
    command = [sys.executable, "-m", "chateval.cli", "run", str(QUICKSTART), "-o", str(out)]
    command += [f"--set={override}" for override in [*SMALL, *extra]]
    done = run_cut_off(command, trace, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.slow
@pytest.mark.isolation  # its own CI stage: `pytest -m isolation` (39-65 s on two cores)
def test_a_two_replica_ray_run_reaches_nothing_but_loopback(
    namespace: None, reference: Path, tmp_path: Path
) -> None:
    """The quickstart (made small) on a local Ray instance (GCS, raylet, dashboard, workers)
    and two vLLM replicas, all in the namespace: Ray's daemons talk over loopback only (the
    trace saw them talk), the transcripts equal the one-engine run outside, and the instance's
    session folder is gone when the run ends, with nothing else of the run's in /tmp."""
    pytest.importorskip("ray")
    leftovers = ("chateval-ray-*", "chateval-replicas-*")  # a session folder, core slots
    before = {path for pattern in leftovers for path in Path("/tmp").glob(pattern)}
    out, trace = tmp_path / "run", tmp_path / "trace"
    run_quickstart_cut_off(out, trace, "scale.replicas=2")
    assert outbound(trace) == []
    assert loopback_calls(trace) > 20
    same_results(out, reference)
    info = json.loads((out / "run.json").read_text())
    assert [s["requests"] > 0 for s in info["replicas"][DEFAULT_MODEL]] == [True, True]
    # Nothing new (it may have removed a killed command's folder).
    assert {path for pattern in leftovers for path in Path("/tmp").glob(pattern)} <= before
    # What it wrote is its owner's only.
    assert stat.S_IMODE(out.stat().st_mode) == 0o700
    assert {stat.S_IMODE(f.stat().st_mode) for f in out.iterdir()} == {0o600}


# Inside the namespace: start the server as the docs' command does (a shell command line,
# its own process group), wait until it lists its model, ask for a few tokens, stop it. Only
# the standard library, so that this process sets nothing in the server's environment.
SERVE_ONE_REQUEST = """
import json, os, signal, subprocess, sys, time, urllib.request
command, log, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
base = "http://127.0.0.1:8000/v1"
local = urllib.request.build_opener(urllib.request.ProxyHandler({}))
with open(log, "ab") as sink:
    server = subprocess.Popen(["bash", "-c", command], stdout=sink, stderr=subprocess.STDOUT,
                              start_new_session=True)
try:
    deadline = time.monotonic() + timeout
    while True:
        if server.poll() is not None:
            sys.exit(f"the server exited with {server.returncode}")
        try:
            local.open(base + "/models", timeout=2)
            break
        except OSError:
            if time.monotonic() > deadline:
                sys.exit("the server did not start")
            time.sleep(1)
    body = {"model": "smollm2-135m", "max_tokens": 4, "temperature": 0,
            "messages": [{"role": "user", "content": "Say hello."}]}
    request = urllib.request.Request(base + "/chat/completions", json.dumps(body).encode(),
                                     {"Content-Type": "application/json"})
    print(json.load(local.open(request, timeout=120))["choices"][0]["message"]["content"])
finally:  # stopped as Ctrl-C stops it (after a SIGTERM vLLM's API server can hang); the
    # trace ends when the server's processes do
    os.killpg(server.pid, signal.SIGINT)
    try:
        server.wait(60)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
"""


def docs_server_command() -> str:
    """The command of docs/models.md ("Served models") that starts the default model's server
    (lines continued with a backslash joined), with this checkout's interpreter for ``.venv``'s."""
    page = re.sub(r"\s*\\\n\s*", " ", (ROOT / "docs" / "models.md").read_text())
    (command,) = [line for line in page.splitlines() if "vllm.entrypoints.openai.api_server" in line]
    command = command.replace(".venv/bin/python", sys.executable)
    return command.replace(".venv/bin/chateval", f"{sys.executable} -m chateval.cli")


@pytest.mark.slow
@pytest.mark.isolation
def test_the_readmes_served_model_reaches_nothing_but_loopback(namespace: None, tmp_path: Path) -> None:
    """The docs' ``vllm serve`` command (``env $(chateval env) ...``), from a user's shell
    that has none of chateval's settings, serves one request over loopback inside the
    namespace: vLLM's front end and engine core make no attempt to reach another address
    (vLLM looks up "this host's address" with a UDP connect to 8.8.8.8 unless VLLM_HOST_IP
    names it, which ``chateval env`` does)."""
    pytest.importorskip("vllm")
    trace, log = tmp_path / "trace", tmp_path / "vllm-server.log"
    command = docs_server_command()
    assert command.startswith(f"env $({sys.executable} -m chateval.cli env) ")
    script = [sys.executable, "-c", SERVE_ONE_REQUEST, command, str(log), str(STARTUP_TIMEOUT_S)]
    # vLLM leaves its IPC sockets and rendezvous file in the temp folder, even after a clean
    # stop: a temp folder of the test's own (short: a socket's path has at most 107 bytes).
    with tempfile.TemporaryDirectory(prefix="served-") as temp:
        done = subprocess.run(
            cut_off(script, trace),
            capture_output=True,
            text=True,
            timeout=STARTUP_TIMEOUT_S + 180,
            cwd=ROOT,
            env={**without_chateval_settings(Path.home()), "TMPDIR": temp},
        )
    assert done.returncode == 0, done.stderr[-2000:] + log.read_text()[-3000:]
    assert done.stdout.strip()  # the server answered
    assert outbound(trace) == []
    assert loopback_calls(trace) > 0
