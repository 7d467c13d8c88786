"""The one backend contract: a list of generation requests in, results out in the same order.

Backends know nothing about debates; strategies never call a backend. A backend instance serves
exactly one model; the scheduler groups the requests of a step by model.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

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
    backend enforces it with outlines-built structured decoding.
    """

    model: str
    messages: tuple[ChatMessage, ...]
    max_tokens: int
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = None
    regex: str | None = None


FinishReason = Literal["stop", "length"]


@dataclass(frozen=True)
class GenerationResult:
    """One completion plus the token counts the run accounting needs."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    finish_reason: FinishReason


@runtime_checkable
class Backend(Protocol):
    """A loaded model that turns a batch of requests into results, in order."""

    model: str

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """Run every request (all for ``self.model``) and return results in request order."""
        ...

    def close(self) -> None:
        """Release the model's memory."""
        ...
