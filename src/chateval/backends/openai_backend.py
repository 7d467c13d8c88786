"""The ``openai`` backend: a model that an OpenAI-compatible server hosts (``vllm serve`` first).

Every ready request of a step goes out at once as a chat-completions call (async, one
connection pool, ``max_concurrency`` in flight), so the server's continuous batching sees the
whole step; under streaming scheduling each debate's next turn goes out the moment its last one
returns. The request carries what the offline engines do in-process, in vLLM's fields:

- a final assistant message is continued (``continue_final_message``), not answered;
- a verdict's regular expression goes in ``structured_outputs`` (the same verdict format objects
  build it), so verdicts parse as they do offline;
- soft verdicts ask for the digit tokens' log-probabilities at every position
  (``logprob_token_ids``) and for the generated token ids, read with the local tokenizer.

Tokens are counted (context checks before the run, truncation) with the model's local folder
when the registry entry has one, exactly as the engines count; otherwise by the server's own
``/tokenize`` endpoint (vLLM's), one call per count.
"""

import concurrent.futures
import contextlib
import os
import queue
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chateval.backends.http import ServerClient
from chateval.core.backend import (
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    HFTokenCounting,
    Keep,
    collect_in_order,
    probabilities_by_text,
)
from chateval.core.model_spec import ModelSpec, ServerSpec
from chateval.core.tokenizers import load_tokenizer
from chateval.errors import BackendError, ConfigError

_TOKEN_ID_PREFIX = "token_id:"  # how vLLM spells tokens with return_tokens_as_token_ids


def served_name(model: str, server: ServerSpec) -> str:
    """The name the server hosts ``model`` under."""
    return server.model or model


def server_client(model: str, server: ServerSpec) -> ServerClient:
    """A client for ``model``'s server, with its API key from the named environment variable."""
    headers = {}
    if server.api_key_env:
        key = os.environ.get(server.api_key_env)
        if not key:
            raise ConfigError(
                f"model {model!r}: its server's API key is read from ${server.api_key_env}, which is not set"
            )
        headers["Authorization"] = f"Bearer {key}"
    return ServerClient(
        server.base_url,
        headers=headers,
        max_concurrency=server.max_concurrency,
        timeout_s=server.timeout_s,
        max_retries=server.max_retries,
        backoff_s=server.backoff_s,
        name=f"model {model!r} at {server.base_url}",
    )


def model_card(model: str, server: ServerSpec, client: ServerClient) -> dict[str, Any]:
    """The server's ``/models`` entry of ``model``; ConfigError when it hosts no such name."""
    listed = client.get("models").get("data") or []
    cards = {str(card.get("id")): card for card in listed if isinstance(card, dict)}
    name = served_name(model, server)
    if name not in cards:
        raise ConfigError(
            f"model {model!r}: the server at {server.base_url} hosts no model {name!r} "
            f"(it hosts: {', '.join(sorted(cards)) or 'none'}); set server.model to the served name"
        )
    return cards[name]


def check_server(model: str, server: ServerSpec) -> None:
    """Before a run starts: the server answers and hosts the model (BackendError: unreachable)."""
    client = server_client(model, server)
    try:
        model_card(model, server, client)
    finally:
        client.close()


class OpenAIBackend(HFTokenCounting):
    """Serves one registry model through an OpenAI-compatible chat-completions server."""

    def __init__(self, model: str, spec: ModelSpec, folder: Path | None, seed: int | None = None) -> None:
        if spec.server is None:
            raise ConfigError(f"model {model!r}: backend openai needs a server section")
        self.model = model
        self.server = spec.server
        self.served = served_name(model, spec.server)
        self.seed = seed
        self.client = server_client(model, spec.server)
        try:
            card = model_card(model, spec.server, self.client)
        except Exception:
            self.client.close()
            raise
        # The entry's context length if it sets one, else what the server was started with.
        served_length = card.get("max_model_len")
        own = "max_model_len" in spec.model_fields_set or not served_length
        self.context_window = spec.max_model_len if own else int(str(served_length))
        self.use_template(spec)
        self.tokenizer: Any = None
        if folder is not None:
            try:
                self.tokenizer = load_tokenizer(folder, spec.trust_remote_code)
            except Exception:
                self.client.close()
                raise
        self._in_flight: dict[str, tuple[GenerationRequest, concurrent.futures.Future[dict[str, Any]]]] = {}
        self._done: queue.Queue[str] = queue.Queue()  # keys whose answer arrived
        self._arrived: list[str] = []  # keys taken off the queue by wait, not yet polled

    # Generation -------------------------------------------------------------------------------
    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Send all ``requests`` at once (up to ``max_concurrency`` in flight); results in order."""
        return collect_in_order(self, [(f"batch\x1f{index}", r) for index, r in enumerate(requests)])

    def submit(self, key: str, request: GenerationRequest) -> None:
        """Send one request; its result comes back from ``poll`` under ``key``."""
        future = self.client.submit("chat/completions", self.body(request))
        self._in_flight[key] = (request, future)
        future.add_done_callback(lambda _: self._done.put(key))

    def wait(self, timeout: float) -> None:
        """Block until an answer arrives or ``timeout`` seconds pass (polling is free)."""
        if self._arrived:
            return
        with contextlib.suppress(queue.Empty):
            self._arrived.append(self._done.get(timeout=timeout))

    def poll(self) -> list[tuple[str, GenerationResult]]:
        """The requests whose answers arrived; a request that failed for good raises
        BackendError (its retries are spent)."""
        while True:
            try:
                self._arrived.append(self._done.get_nowait())
            except queue.Empty:
                break
        arrived, self._arrived = self._arrived, []
        finished = []
        for key in arrived:
            request, future = self._in_flight.pop(key)
            finished.append((key, self._result(future.result(), request)))
        return finished

    def body(self, request: GenerationRequest) -> dict[str, Any]:
        """The chat-completions request body of ``request``."""
        lead = bool(request.messages) and request.messages[-1].role == "assistant"
        body: dict[str, Any] = {
            "model": self.served,
            # The server applies the template; with the local tokenizer, chateval knows whether
            # it would add a default system prompt (HFTokenCounting.as_sent).
            "messages": [{"role": m.role, "content": m.content} for m in self.as_sent(request.messages)],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "top_p": request.top_p,
        }
        seed = request.seed if request.seed is not None else self.seed
        if seed is not None:
            body["seed"] = seed
        if lead:
            body["continue_final_message"] = True
            body["add_generation_prompt"] = False
        if request.regex:
            body["structured_outputs"] = {"regex": request.regex}
        if request.probabilities_of:
            body["logprobs"] = True
            body["logprob_token_ids"] = sorted(self.ids_of(request.probabilities_of))
            body["return_tokens_as_token_ids"] = True
            body["return_token_ids"] = True
        return body

    def _result(self, answer: Mapping[str, Any], request: GenerationRequest) -> GenerationResult:
        try:
            choice = answer["choices"][0]
            text = choice["message"].get("content") or ""
            usage = answer.get("usage") or {}
            details = usage.get("prompt_tokens_details") or {}
            ends: tuple[int, ...] = ()
            probabilities = None
            if request.probabilities_of:
                ids = list(choice.get("token_ids") or [])
                positions = (choice.get("logprobs") or {}).get("content") or []
                texts = self.ids_of(request.probabilities_of)
                ends = self.token_ends(ids)
                probabilities = tuple(_by_text(p.get("top_logprobs") or [], texts) for p in positions)
            return GenerationResult(
                text=text,
                prompt_tokens=int(usage.get("prompt_tokens", 0)),
                generated_tokens=int(usage.get("completion_tokens", 0)),
                finish_reason="length" if choice.get("finish_reason") == "length" else "stop",
                cached_prompt_tokens=int(details.get("cached_tokens") or 0),
                token_ends=ends,
                token_probabilities=probabilities,
            )
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            raise BackendError(
                f"model {self.model!r}: the server's answer is not a chat completion ({exc!r})"
            ) from None

    def close(self) -> None:
        """Cancel requests still in flight and close the connections (the server keeps running)."""
        self._in_flight.clear()
        self.client.close()

    # Token counting: the local tokenizer when there is one, else the server's /tokenize -------
    @property
    def counts_remotely(self) -> bool:
        """Each count is a request to the server (no local tokenizer): callers counting many
        prompts do it from several threads."""
        return self.tokenizer is None

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        if self.tokenizer is not None:
            return super().count_prompt_tokens(messages)
        lead = bool(messages) and messages[-1].role == "assistant"
        body = {
            "model": self.served,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "add_generation_prompt": not lead,
            "continue_final_message": lead,
        }
        return int(self.client.post("../tokenize", body)["count"])

    def count_tokens(self, text: str) -> int:
        if self.tokenizer is not None:
            return super().count_tokens(text)
        return len(self._server_ids(text))

    def truncate_tokens(self, text: str, max_tokens: int, keep: Keep = "start") -> str:
        if self.tokenizer is not None:
            return super().truncate_tokens(text, max_tokens, keep)
        ids = self._server_ids(text)
        if len(ids) <= max_tokens:
            return text
        kept = ids[:max_tokens] if keep == "start" else ids[len(ids) - max_tokens :]
        return str(self.client.post("../detokenize", {"model": self.served, "tokens": kept})["prompt"])

    def digit_tokens(self) -> dict[int, str]:
        if self.tokenizer is None:
            raise ConfigError(
                f"model {self.model!r}: soft verdicts on a served model need its tokenizer; set path "
                "in its registry entry to a local copy of the model folder, or set verdict.soft: false"
            )
        return super().digit_tokens()

    def _server_ids(self, text: str) -> list[int]:
        body = {"model": self.served, "prompt": text, "add_special_tokens": False}
        return [int(t) for t in self.client.post("../tokenize", body)["tokens"]]


def _by_text(candidates: Sequence[Mapping[str, Any]], texts: Mapping[int, str]) -> dict[str, float]:
    """One position's asked-for probabilities; tokens come spelled ``token_id:N``."""
    logprobs = {
        int(str(c["token"])[len(_TOKEN_ID_PREFIX) :]): float(c["logprob"])
        for c in candidates
        if str(c.get("token", "")).startswith(_TOKEN_ID_PREFIX)
    }
    return probabilities_by_text(logprobs, texts)
