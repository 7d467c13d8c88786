"""HTTP to an OpenAI-compatible server: one connection pool, bounded concurrency, retries.

The client runs its own asyncio loop on a daemon thread, so the synchronous scheduler can keep
hundreds of requests in flight (``submit`` returns a future at once) while the server's
continuous batching sees them all. Failures are sorted the way a long evaluation needs:

- connection errors, timeouts, dropped connections, HTTP 408, 429 and 5xx are retried, at most
  ``max_retries`` times, waiting ``backoff_s``, then twice that, and so on, each wait drawn up
  to half as long again (jitter: hundreds of requests failed together must not all come back
  in the same instant); a ``Retry-After`` of seconds, when the server sends one, is waited at
  least (up to ``_MAX_RETRY_AFTER_S``);
- any other 4xx (a wrong model name, a field the server does not take) fails at once, with the
  server's own message: retrying cannot fix the request.
"""

import asyncio
import concurrent.futures
import contextlib
import logging
import random
import threading
from collections.abc import Coroutine, Mapping
from typing import Any, TypeVar

import httpx

from chateval.core.console_handler import once
from chateval.errors import BackendError

log = logging.getLogger(__name__)

T = TypeVar("T")
_RETRIED_STATUS = {408, 429}
_DETAIL_CHARS = 500  # of a server's error body quoted in a message
_CONNECT_TIMEOUT_S = 10.0
_MAX_RETRY_AFTER_S = 120.0  # a server asking for longer than this is waited this long


class ServerClient:
    """Requests to one server (``base_url``, e.g. ``http://127.0.0.1:8000/v1``)."""

    def __init__(
        self,
        base_url: str,
        *,
        headers: Mapping[str, str] | None = None,
        max_concurrency: int = 64,
        timeout_s: float = 600.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        name: str = "server",
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.name = name
        self.retries = 0  # retried attempts so far
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=f"chateval-{name}", daemon=True)
        self._thread.start()

        async def open_client() -> tuple[httpx.AsyncClient, asyncio.Semaphore]:
            limits = httpx.Limits(max_connections=max_concurrency, max_keepalive_connections=max_concurrency)
            # A quick connect timeout: a silent address must not take max_retries x timeout_s.
            timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, _CONNECT_TIMEOUT_S))
            client = httpx.AsyncClient(headers=dict(headers or {}), limits=limits, timeout=timeout)
            return client, asyncio.Semaphore(max_concurrency)

        self._client, self._slots = self._wait(open_client())

    def url(self, path: str) -> str:
        """``path`` under the base URL; ``/tokenize``-style paths that vLLM serves at the root
        are written ``../tokenize``."""
        if path.startswith("../"):
            root = self.base_url.rsplit("/", 1)[0] if self.base_url.endswith("/v1") else self.base_url
            return f"{root}/{path[3:]}"
        return f"{self.base_url}/{path.lstrip('/')}"

    def submit(self, path: str, body: Mapping[str, Any]) -> "concurrent.futures.Future[dict[str, Any]]":
        """POST ``body`` to ``path`` without waiting; the future holds the JSON answer or the
        BackendError that ended the retries."""
        return asyncio.run_coroutine_threadsafe(self._request("POST", path, body), self._loop)

    def post(self, path: str, body: Mapping[str, Any]) -> dict[str, Any]:
        """POST ``body`` to ``path`` and wait for the JSON answer."""
        return self._wait(self._request("POST", path, body))

    def get(self, path: str) -> dict[str, Any]:
        """GET ``path`` and wait for the JSON answer."""
        return self._wait(self._request("GET", path, None))

    def close(self) -> None:
        """Cancel what is in flight, close the connections and stop the loop thread."""
        if not self._thread.is_alive():
            return

        async def shut() -> None:
            current = asyncio.current_task()
            for task in asyncio.all_tasks():
                if task is not current:
                    task.cancel()
            await self._client.aclose()

        with contextlib.suppress(Exception):  # closing must not hide the error that led here
            self._wait(shut(), timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def _wait(self, coroutine: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout)

    async def _request(self, method: str, path: str, body: Mapping[str, Any] | None) -> dict[str, Any]:
        url = self.url(path)
        problem = ""
        asked_wait = 0.0  # the last answer's Retry-After
        for attempt in range(self.max_retries + 1):
            if attempt:
                self.retries += 1
                backoff = self.backoff_s * 2 ** (attempt - 1) * random.uniform(1.0, 1.5)
                log.warning(
                    "%s: retrying %s %s (%s)",
                    self.name,
                    method,
                    url,
                    problem,
                    extra=once(f"retry {self.name}", f"retries of requests to {self.name}"),
                )
                await asyncio.sleep(max(backoff, asked_wait))
            asked_wait = 0.0
            try:
                async with self._slots:
                    response = await self._client.request(method, url, json=body)
            except httpx.TransportError as exc:  # refused, reset, timed out, dropped mid-answer
                problem = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                continue
            if response.is_success:
                try:
                    answer = response.json()
                except ValueError:
                    raise BackendError(f"{self.name}: {method} {url} answered with invalid JSON") from None
                if not isinstance(answer, dict):
                    raise BackendError(f"{self.name}: {method} {url} answered with a non-object")
                return answer
            problem = f"HTTP {response.status_code}: {_detail(response)}"
            if response.status_code in _RETRIED_STATUS or response.status_code >= 500:
                asked_wait = _retry_after(response)
                continue
            raise BackendError(f"{self.name}: {method} {url} was refused ({problem})")
        raise BackendError(
            f"{self.name}: {method} {url} failed {self.max_retries + 1} times "
            f"(retries with backoff from {self.backoff_s:g} s); last: {problem}"
        )


def _retry_after(response: httpx.Response) -> float:
    """Seconds the server asked to wait (``Retry-After: 5``); 0 when absent or an HTTP date."""
    try:
        return min(max(float(response.headers.get("Retry-After", "0")), 0.0), _MAX_RETRY_AFTER_S)
    except ValueError:
        return 0.0


def _detail(response: httpx.Response) -> str:
    """The server's error message: OpenAI-style ``{"error": {"message": ...}}`` or the body."""
    try:
        data = response.json()
    except ValueError:
        return response.text[:_DETAIL_CHARS] or response.reason_phrase
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict) and error.get("message"):
        return str(error["message"])[:_DETAIL_CHARS]
    if isinstance(data, dict) and data.get("detail"):
        return str(data["detail"])[:_DETAIL_CHARS]
    return response.text[:_DETAIL_CHARS]
