"""A scripted fake backend for unit tests of scheduling and aggregation logic.

It records every request and answers with a caller-supplied function, so tests can check who
saw which message and how many calls a run made without loading a model.
"""

from collections.abc import Callable, Sequence

from chateval.backends.base import GenerationRequest, GenerationResult

Responder = Callable[[GenerationRequest], str]


class ScriptedBackend:
    """Answers each request with ``responder(request)``; keeps a log of calls."""

    def __init__(self, model: str, responder: Responder) -> None:
        self.model = model
        self.responder = responder
        self.calls: list[list[GenerationRequest]] = []

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls.append(list(requests))
        results = []
        for request in requests:
            text = self.responder(request)
            prompt_tokens = sum(len(m.content.split()) for m in request.messages)
            results.append(GenerationResult(text, prompt_tokens, len(text.split()), "stop"))
        return results

    def close(self) -> None:
        pass
