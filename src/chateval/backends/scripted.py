"""A scripted fake backend for unit tests of scheduling and aggregation logic.

It records every request and answers with a caller-supplied function, so tests can check who
saw which message and how many calls a run made without loading a model.
"""

from collections.abc import Callable, Sequence

from chateval.core.backend import ChatMessage, GenerationRequest, GenerationResult, Keep

# A responder returns the completion's text, or a whole result (to script token probabilities).
Responder = Callable[[GenerationRequest], str | GenerationResult]


class ScriptedBackend:
    """Answers each request with ``responder(request)``; keeps a log of calls."""

    def __init__(self, model: str, responder: Responder, context_window: int = 1_000_000) -> None:
        self.model = model
        self.responder = responder
        self.context_window = context_window
        self.calls: list[list[GenerationRequest]] = []

    # Tokens are whitespace-separated words: simple to reason about in tests.
    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return sum(self.count_tokens(m.content) for m in messages)

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def truncate_tokens(self, text: str, max_tokens: int, keep: Keep = "start") -> str:
        words = text.split()
        if len(words) <= max_tokens:
            return text
        return " ".join(words[:max_tokens] if keep == "start" else words[len(words) - max_tokens :])

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        self.calls.append(list(requests))
        results = []
        for request in requests:
            answer = self.responder(request)
            if isinstance(answer, GenerationResult):
                results.append(answer)
                continue
            prompt_tokens = self.count_prompt_tokens(request.messages)
            results.append(GenerationResult(answer, prompt_tokens, len(answer.split()), "stop"))
        return results

    def close(self) -> None:
        pass


class StreamingScriptedBackend(ScriptedBackend):
    """A scripted backend with the streaming interface: each ``poll`` finishes some queued
    requests in a scrambled order, like an engine whose requests finish at different times."""

    def __init__(self, model: str, responder: Responder, per_poll: int = 3) -> None:
        super().__init__(model, responder)
        self.per_poll = per_poll
        self.queue: list[tuple[str, GenerationRequest]] = []
        self.polls = 0

    def submit(self, key: str, request: GenerationRequest) -> None:
        self.queue.append((key, request))

    def poll(self) -> list[tuple[str, GenerationResult]]:
        self.polls += 1
        # Finish the newest requests first: the opposite of a barrier's order.
        chosen, self.queue = self.queue[-self.per_poll :], self.queue[: -self.per_poll]
        if not chosen:
            return []
        results = self.generate([request for _, request in chosen])
        return [(key, result) for (key, _), result in zip(chosen, results, strict=True)]
