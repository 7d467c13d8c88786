"""Start and stop a real vLLM OpenAI-compatible server (the CPU build) on a loopback port.

The flags mirror what chateval's offline engine sets (docs/models.md, "Served models"), so a served run
and an offline run of the same model decode alike.
"""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

STARTUP_TIMEOUT_S = 300


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class VllmServer:
    """``python -m vllm.entrypoints.openai.api_server`` serving ``folder`` as ``name``."""

    def __init__(self, folder: Path, name: str, port: int, log: Path, max_model_len: int = 8192) -> None:
        self.folder, self.name, self.port, self.log = folder, name, port, log
        self.max_model_len = max_model_len
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> None:
        """Start the server and wait until it lists its model (RuntimeError if it dies)."""
        from chateval.backends.vllm_backend import cpu_engine_settings
        from chateval.core.engine_settings import VllmSettings
        from chateval.offline import environment as offline_environment

        # As the docs' command: chateval's settings (`chateval env`), then the CPU build's
        # settings that chateval's offline engine runs with.
        env = {**os.environ, **offline_environment(), **cpu_engine_settings(VllmSettings())}
        command = [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", str(self.folder), "--served-model-name", self.name,
            "--host", "127.0.0.1", "--port", str(self.port),
            "--dtype", "float32", "--max-model-len", str(self.max_model_len),
            "--enforce-eager", "--block-size", "32", "--enable-prefix-caching",
            "--structured-outputs-config", '{"backend": "outlines"}',
            "--seed", "0", "--max-num-seqs", "256", "--generation-config", "vllm",
            "--enable-prompt-tokens-details",
        ]  # fmt: skip
        with self.log.open("ab") as sink:
            # Its own process group: stopping it takes the engine-core child along.
            self.process = subprocess.Popen(
                command, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"vLLM server exited with {self.process.returncode}; see {self.log}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2).is_success:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1)
        self.stop()
        raise RuntimeError(f"vLLM server not ready after {STARTUP_TIMEOUT_S} s; see {self.log}")

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        """Stop the server (SIGKILL: as if it crashed) and wait for its processes to end."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, sig)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=30)
        if sig == signal.SIGKILL:  # the group's children may outlive the leader by a moment
            time.sleep(1)
