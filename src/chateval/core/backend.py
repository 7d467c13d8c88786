"""The one backend contract: a list of generation requests in, results out in the same order.

Backends know nothing about debates; strategies never call a backend. A backend instance serves
exactly one model; the scheduler groups the requests of a step by model.
"""

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from chateval.core.chat_template import injected_system_prompt
from chateval.errors import BackendError

if TYPE_CHECKING:
    from chateval.core.model_spec import ModelSpec

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class ChatMessage:
    """One chat message handed to a model's chat template."""

    role: Role
    content: str


@dataclass(frozen=True)
class GenerationRequest:
    """Everything a backend needs to produce one completion.

    ``regex`` (when set) constrains the whole completion to that regular expression; the
    backend enforces it with outlines-built structured decoding. When the last message is an
    assistant message, the completion continues it (a lead such as ``"Critic:"``, or a
    referee's written assessment followed by ``"Scores:"``); the result holds only the new text.

    ``probabilities_of`` (soft verdicts): token texts (digit strings) whose probabilities the
    result reports at every generated position, taken after the constraint's mask.
    """

    model: str
    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    regex: str | None = None
    probabilities_of: tuple[str, ...] = ()


FinishReason = Literal["stop", "length"]
Keep = Literal["start", "end"]


@dataclass(frozen=True)
class GenerationResult:
    """One completion plus the token counts the run accounting needs.

    For a request with ``probabilities_of``, a backend that can read token probabilities sets
    ``token_ends`` (where each generated token, a final end token included, ends in ``text``)
    and ``token_probabilities`` (per generated token: each asked-for text and its probability,
    summed over the tokens that spell it). None: this backend cannot report them.
    """

    text: str
    prompt_tokens: int
    generated_tokens: int
    finish_reason: FinishReason
    cached_prompt_tokens: int = 0  # prompt tokens served from the engine's prefix cache
    token_ends: tuple[int, ...] = ()
    token_probabilities: tuple[Mapping[str, float], ...] | None = None


class TokenCounter(Protocol):
    """Counts tokens the way one model does, so a run can check before it starts that every
    prompt fits ``context_window`` (prompt plus completion, in tokens)."""

    model: str
    context_window: int

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        """Tokens of ``messages`` rendered with the model's chat template."""
        ...

    def count_tokens(self, text: str) -> int:
        """Tokens of plain ``text``."""
        ...

    def truncate_tokens(self, text: str, max_tokens: int, keep: Keep = "start") -> str:
        """``text`` cut to at most ``max_tokens`` tokens, keeping its start or its end."""
        ...


@runtime_checkable
class Backend(TokenCounter, Protocol):
    """A loaded model that turns a batch of requests into results, in order."""

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Run every request (all for ``self.model``) and return results in request order."""
        ...

    def close(self) -> None:
        """Release the model's memory."""
        ...


@runtime_checkable
class StreamingBackend(Backend, Protocol):
    """A backend that accepts requests one by one into a running engine (no step barrier)."""

    def submit(self, key: str, request: GenerationRequest) -> None:
        """Queue ``request``; its result is returned by a later ``poll`` under ``key``."""
        ...

    def poll(self) -> list[tuple[str, GenerationResult]]:
        """Advance the engine one step; return the requests that finished."""
        ...


@runtime_checkable
class LiveTokens(StreamingBackend, Protocol):
    """A streaming backend that knows how far its running requests have got, so a progress bar
    moves before the first of a long batch finishes."""

    def running_tokens(self) -> int:
        """Tokens generated so far by the requests submitted and not yet returned by ``poll``."""
        ...


@runtime_checkable
class RemoteBackend(StreamingBackend, Protocol):
    """A streaming backend whose requests run elsewhere (a server): a poll computes nothing, so
    a scheduler with nothing else to do waits on it instead of spinning."""

    def wait(self, timeout: float) -> None:
        """Block until some result is ready or ``timeout`` seconds have passed."""
        ...


def resident_first(models: Iterable[str], resident: Iterable[str]) -> list[str]:
    """``models`` once each, the ``resident`` ones first (so a phased step swaps at most once)."""
    wanted = list(dict.fromkeys(models))
    here = set(resident)
    return [m for m in wanted if m in here] + [m for m in wanted if m not in here]


class BackendPool(Protocol):
    """Where a scheduler finds each model's backend. ``engines.pool.ModelPool`` loads them (all
    at once or one at a time); ``FixedPool`` holds backends loaded already."""

    def resident(self) -> list[str]:
        """The models whose backends are loaded now."""
        ...

    def order(self, models: Iterable[str]) -> list[str]:
        """``models`` in the order to run them: the resident ones first."""
        ...

    def get(self, model: str) -> Backend:
        """The backend of ``model``, loading it if the pool does that."""
        ...


class FixedPool:
    """A pool of backends loaded already, by model name."""

    def __init__(self, backends: Mapping[str, Backend]) -> None:
        self.backends = dict(backends)

    def resident(self) -> list[str]:
        return list(self.backends)

    def order(self, models: Iterable[str]) -> list[str]:
        return resident_first(models, self.backends)

    def get(self, model: str) -> Backend:
        if model not in self.backends:
            raise BackendError(f"no backend loaded for model {model!r}")
        return self.backends[model]


def collect_in_order(
    backend: RemoteBackend, keyed: Sequence[tuple[str, GenerationRequest]]
) -> list[GenerationResult]:
    """A batch through a remote backend's streaming calls: submit every request under its key,
    wait for all, return the results in request order (``generate`` of such backends)."""
    for key, request in keyed:
        backend.submit(key, request)
    results: dict[str, GenerationResult] = {}
    while len(results) < len(keyed):
        backend.wait(1.0)
        results.update(backend.poll())
    return [results[key] for key, _ in keyed]


def probabilities_by_text(logprobs: Mapping[int, float], texts: Mapping[int, str]) -> dict[str, float]:
    """One position's probabilities of the asked-for token ids (``texts``: id -> text), summed
    per text: a tokenizer may spell a digit with two tokens (Gemma's ``7`` and its byte-fallback
    ``<0x37>``)."""
    out: dict[str, float] = {}
    for token, logprob in logprobs.items():
        if token in texts:
            out[texts[token]] = out.get(texts[token], 0.0) + math.exp(logprob)
    return out


def sent_messages(
    messages: Sequence[ChatMessage], replaced_system_prompt: str | None
) -> tuple[ChatMessage, ...]:
    """``messages`` as a model gets them: with an empty system message first when they have none
    and the model's chat template would add its own (``replaced_system_prompt``, see
    chateval.core.chat_template)."""
    if replaced_system_prompt is None or (messages and messages[0].role == "system"):
        return tuple(messages)
    return (ChatMessage("system", ""), *messages)


class HFTokenCounting:
    """Token counting for backends that hold a Hugging Face tokenizer, and the messages as they
    are sent to the model (``as_sent``)."""

    tokenizer: Any
    chat_template: str | None = None  # None: the tokenizer's own
    keep_template_system_prompt: bool = False

    def use_template(self, spec: "ModelSpec") -> None:
        """Take the chat template settings of the model's registry entry."""
        self.chat_template = spec.chat_template
        self.keep_template_system_prompt = spec.keeps_template_system_prompt

    def replaced_system_prompt(self) -> str | None:
        """The default system prompt the model's chat template would add to a chat without one,
        which chateval replaces by an empty system message (None: none is added, or the
        registry keeps it). Read once."""
        if "_replaced_system_prompt" not in self.__dict__:
            found = None
            if self.tokenizer is not None and not self.keep_template_system_prompt:
                found = injected_system_prompt(
                    self.chat_template or getattr(self.tokenizer, "chat_template", None)
                )
            self._replaced_system_prompt = found
        replaced: str | None = self._replaced_system_prompt
        return replaced

    def as_sent(self, messages: Sequence[ChatMessage]) -> tuple[ChatMessage, ...]:
        """``messages`` as the model gets them (``sent_messages``)."""
        return sent_messages(messages, self.replaced_system_prompt())

    def render_ids(self, messages: Sequence[ChatMessage]) -> list[int]:
        """``messages`` rendered with the model's chat template, ready for generation, as ids.

        A final assistant message is a lead to continue (see ``GenerationRequest``): the chat
        before it is rendered with the generation prompt and the lead's tokens follow. That is
        exactly where the model's own answer would have started, for any template (the
        template's ``continue_final_message`` instead searches the rendered text for the lead
        and strips its trailing whitespace).
        """
        messages = self.as_sent(messages)
        lead = messages[-1].content if messages and messages[-1].role == "assistant" else None
        chat = messages[:-1] if lead is not None else messages
        conversation = [{"role": m.role, "content": m.content} for m in chat]
        ids = self.tokenizer.apply_chat_template(
            conversation, tokenize=True, add_generation_prompt=True, chat_template=self.chat_template
        )
        # transformers 5 returns a BatchEncoding here, 4.x a plain list of ids.
        rendered = list(ids["input_ids"] if hasattr(ids, "keys") else ids)
        if lead:
            rendered += self.tokenizer.encode(lead, add_special_tokens=False)
        return rendered

    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return len(self.render_ids(messages))

    def digit_tokens(self) -> dict[int, str]:
        """Every non-special token whose text holds an ASCII digit, id -> text (kept after the
        first call).

        Only tokens whose vocabulary entry holds a digit can decode to one (byte-level and
        SentencePiece vocabularies keep digits as they are, byte-fallback tokens are written
        ``<0x37>``), so only those are decoded: decoding a 262k vocabulary one token at a
        time takes tens of seconds.
        """
        found: dict[int, str] | None = self.__dict__.get("_digit_tokens")
        if found is None:
            added = getattr(self.tokenizer, "added_tokens_decoder", {})
            special = set(self.tokenizer.all_special_ids) | {i for i, t in added.items() if t.special}
            found = {}
            for entry, token in self.tokenizer.get_vocab().items():
                if token in special or not any("0" <= c <= "9" for c in entry):
                    continue
                text = self.tokenizer.decode([token])
                if any("0" <= c <= "9" for c in text):
                    found[token] = text
            self._digit_tokens = found
        return found

    def ids_of(self, texts: Sequence[str]) -> dict[int, str]:
        """Every token id whose text is one of ``texts`` (digit strings), mapped to that text."""
        wanted = set(texts)
        return {i: t for i, t in self.digit_tokens().items() if t in wanted}

    def token_ends(self, ids: Sequence[int]) -> tuple[int, ...]:
        """Where each of the generated ``ids`` ends in their decoded text."""
        return tuple(
            len(self.tokenizer.decode(ids[: k + 1], skip_special_tokens=True)) for k in range(len(ids))
        )

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def truncate_tokens(self, text: str, max_tokens: int, keep: Keep = "start") -> str:
        ids = self.tokenizer.encode(text, add_special_tokens=False)
        if len(ids) <= max_tokens:
            return text
        kept = ids[:max_tokens] if keep == "start" else ids[len(ids) - max_tokens :]
        return str(self.tokenizer.decode(kept, skip_special_tokens=True))
