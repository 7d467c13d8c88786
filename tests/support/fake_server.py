"""A small OpenAI-compatible server on a loopback port that answers like a scripted backend and
fails on purpose: for the ``openai`` backend's unit tests (retries, backoff, timeouts, 4xx).

It speaks the parts of vLLM's server that chateval uses: ``GET /v1/models``, ``POST
/v1/chat/completions`` and ``POST /tokenize`` (at the root, as vLLM serves it). Tokens are
whitespace-separated words, as in :class:`chateval.backends.scripted.ScriptedBackend`, so a run
through this server and a run on the scripted backend count and answer alike.
"""

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from chateval.core.backend import ChatMessage, GenerationRequest

Responder = Callable[[GenerationRequest], str]


@dataclass
class Behaviour:
    """What the server does; tests change it while it runs."""

    models: list[str] = field(default_factory=lambda: ["served"])
    responder: Responder = lambda request: "fine."  # noqa: E731
    failures: list[int] = field(default_factory=list)  # statuses for the next completions
    retry_after: str | None = None  # the Retry-After header of those failures
    refuse: tuple[int, str] | None = None  # every completion answers this status and message
    delay_s: float = 0.0  # before each completion answers
    tokenize_delay_s: float = 0.0  # before each /tokenize answers
    tokenize_peak: int = 0  # most /tokenize requests in flight at once
    _tokenizing: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)
    api_key: str | None = None  # required as "Bearer KEY" when set
    die_after: int | None = None  # completions answered before the server stops answering
    bodies: list[dict[str, Any]] = field(default_factory=list)  # completion requests seen
    arrivals: list[float] = field(default_factory=list)  # their times (monotonic)
    headers: list[dict[str, str]] = field(default_factory=list)
    answered: int = 0


def request_of(body: dict[str, Any]) -> GenerationRequest:
    """The generation request a chat-completions body stands for."""
    regex = (body.get("structured_outputs") or {}).get("regex")
    return GenerationRequest(
        model=str(body["model"]),
        messages=tuple(ChatMessage(m["role"], m["content"]) for m in body["messages"]),
        max_tokens=int(body.get("max_tokens") or 16),
        regex=regex,
    )


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers do
    wbufsize = 1 << 16  # headers and body in one write: unbuffered, each answer waited ~50 ms
    behaviour: Behaviour

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if self.path == "/v1/models":
            self._send(
                200,
                {"object": "list", "data": [{"id": m, "max_model_len": 2048} for m in self.behaviour.models]},
            )
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if self.path == "/tokenize":
            behaviour = self.behaviour
            with behaviour._lock:
                behaviour._tokenizing += 1
                behaviour.tokenize_peak = max(behaviour.tokenize_peak, behaviour._tokenizing)
            time.sleep(behaviour.tokenize_delay_s)
            with behaviour._lock:
                behaviour._tokenizing -= 1
            if "messages" in body:
                words = sum(len(m["content"].split()) for m in body["messages"])
                self._send(200, {"count": words, "tokens": list(range(words))})
            else:
                words = len(str(body["prompt"]).split())
                self._send(200, {"count": words, "tokens": list(range(words))})
        elif self.path == "/v1/chat/completions":
            self._complete(body)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}})

    def _complete(self, body: dict[str, Any]) -> None:
        behaviour = self.behaviour
        behaviour.bodies.append(body)
        behaviour.arrivals.append(time.monotonic())
        behaviour.headers.append(dict(self.headers))
        if behaviour.die_after is not None and behaviour.answered >= behaviour.die_after:
            self.close_connection = True  # hang up without an answer, as a dead server does
            return
        if behaviour.api_key and self.headers.get("Authorization") != f"Bearer {behaviour.api_key}":
            self._send(401, {"error": {"message": "invalid API key"}})
            return
        if behaviour.failures:
            status = behaviour.failures.pop(0)
            extra = {"Retry-After": behaviour.retry_after} if behaviour.retry_after else {}
            self._send(status, {"error": {"message": f"scripted failure {status}"}}, extra)
            return
        if behaviour.refuse:
            status, message = behaviour.refuse
            self._send(status, {"error": {"message": message}})
            return
        if body["model"] not in behaviour.models:
            self._send(404, {"error": {"message": f"The model `{body['model']}` does not exist."}})
            return
        time.sleep(behaviour.delay_s)
        request = request_of(body)
        text = behaviour.responder(request)
        prompt = sum(len(m.content.split()) for m in request.messages)
        behaviour.answered += 1
        self._send(
            200,
            {
                "object": "chat.completion",
                "model": body["model"],
                "choices": [
                    {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                ],
                "usage": {
                    "prompt_tokens": prompt,
                    "completion_tokens": len(text.split()),
                    "total_tokens": prompt + len(text.split()),
                },
            },
        )

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def fake_server(behaviour: Behaviour, port: int = 0) -> Iterator[str]:
    """Serve ``behaviour`` on 127.0.0.1 (a free port unless given); yields the base URL."""
    handler = type("Handler", (_Handler,), {"behaviour": behaviour})
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
