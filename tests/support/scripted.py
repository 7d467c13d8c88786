"""Scripted referees, backends and small runs that more than one test module uses. The general
helpers they build on (tiny_config, prompt_dependent, ...) are in helpers.py."""

import zlib

from chateval.backends.scripted import Responder, ScriptedBackend, StreamingScriptedBackend
from chateval.config.run import RunConfig
from chateval.core.backend import GenerationRequest, GenerationResult
from chateval.errors import BackendError
from tests.support.helpers import (
    asks_for_scores,
    prompt_dependent,
    prompt_text,
    saw_discussion,
    speaker_of,
    tiny_config,
)

# A three-referee panel on one model (debate scheduling, bench) ---------------------------------

SCRIPTED_MODEL = "smollm2-135m"


def agreeing_on_boiling_point(request: GenerationRequest) -> str:
    """Referees agree on the boiling-point item; elsewhere the critic disagrees with the rest."""
    if not asks_for_scores(request):
        return "Some thoughts."
    if "boiling point" in prompt_text(request) or speaker_of(request) == "Critic":
        return "Assistant 1: 7\nAssistant 2: 2\nEvidence: agree"
    return "Assistant 1: 2\nAssistant 2: 7\nEvidence: differ"


def three_referee_config(**overrides: object) -> RunConfig:
    """Six quickstart items, three referees on ``SCRIPTED_MODEL``, three rounds."""
    tree: dict[str, object] = {
        "data": {"format": "jsonl_pairwise", "path": "samples/quickstart_pairwise.jsonl", "limit": 6},
        "agents": [{"role": "critic"}, {"role": "everyday_reader"}, {"role": "editor"}],
        "rounds": 3,
    }
    tree.update(overrides)
    return tiny_config(**tree)


# Engines that die mid-run (resume) ------------------------------------------------------------


class DiesAtCall(ScriptedBackend):
    """Fails on its ``fail_at``-th call, like an engine crash or an out-of-memory error."""

    def __init__(self, model: str, responder: Responder, fail_at: int) -> None:
        super().__init__(model, responder)
        self.fail_at = fail_at

    def generate(self, requests: list[GenerationRequest]) -> list[GenerationResult]:  # type: ignore[override]
        if len(self.calls) + 1 == self.fail_at:
            raise BackendError("engine died (simulated)")
        return super().generate(requests)


class DiesAtPoll(StreamingScriptedBackend):
    """A streaming engine that dies at its ``fail_at``-th poll."""

    def __init__(self, model: str, responder: Responder, fail_at: int) -> None:
        super().__init__(model, responder)
        self.fail_at = fail_at

    def poll(self) -> list[tuple[str, GenerationResult]]:
        if self.polls + 1 == self.fail_at:
            raise BackendError("engine died (simulated)")
        return super().poll()


# A steady and a swayed model (opinion probes, per-model diagnostics) --------------------------

STEADY_AND_SWAYED_AGENTS = [{"role": "critic", "model": "steady"}, {"role": "editor", "model": "swayed"}]


def steady_or_swayed_referee(request: GenerationRequest) -> str:
    """``steady`` always prefers the first shown answer; ``swayed`` prefers it only until it has
    seen some discussion, then the second."""
    if not asks_for_scores(request):
        return f"{request.model} has a view"
    seen_talk = saw_discussion(request)
    first_wins = request.model == "steady" or not seen_talk
    scores = (8, 3) if first_wins else (2, 9)
    return f"Assistant 1: {scores[0]}\nAssistant 2: {scores[1]}\nEvidence: x"


def steady_and_swayed_backends() -> dict[str, ScriptedBackend]:
    return {m: ScriptedBackend(m, steady_or_swayed_referee) for m in ("steady", "swayed")}


def steady_and_swayed_config(**overrides: object) -> RunConfig:
    return tiny_config(agents=STEADY_AND_SWAYED_AGENTS, position_calibration=False, **overrides)


# Two models m1 and m2 whose engines are loaded and closed (placement, the console) ------------

M1_AND_M2_AGENTS = [{"role": "critic", "model": "m1"}, {"role": "editor", "model": "m2"}]


class LoadLog:
    """A backend factory that records loads and closes, like a real engine's lifetime."""

    def __init__(self) -> None:
        self.events: list[str] = []

    def __call__(self, config: RunConfig, model: str) -> ScriptedBackend:
        self.events.append(f"load {model}")
        backend = ScriptedBackend(model, prompt_dependent)
        events = self.events

        def close() -> None:
            events.append(f"close {model}")

        backend.close = close  # type: ignore[method-assign]
        return backend


# Soft scores (export, systems metrics) ----------------------------------------------------------


def soft_checksum_referee(request: GenerationRequest) -> str | GenerationResult:
    """Scores that depend on everything the speaker was shown, in order (a checksum: a sum of
    characters would not change with the answers' order), each score with a distribution (every
    character one token: the score digit's probabilities sit at its position)."""
    n = zlib.crc32(prompt_text(request).encode())
    if not asks_for_scores(request):
        return f"{request.model} counts {n}."
    first, second = n % 8 + 2, (n // 8) % 8 + 2  # 2..9: one character, no "1" that 10 begins
    text = f"\nAssistant 1: {first}\nAssistant 2: {second}"
    probabilities: list[dict[str, float]] = [{} for _ in text]
    for value, at in ((first, text.index(": ") + 2), (second, text.rindex(": ") + 2)):
        probabilities[at] = {str(value): 0.75, str(value + 1 if value < 9 else value - 1): 0.25}
    ends = tuple(range(1, len(text) + 1))
    return GenerationResult(text, 10, len(text), "stop", 0, ends, tuple(probabilities))


# Talk that carries markup (the HTML report) ----------------------------------------------------

HOSTILE_MARKUP = '<script>alert("x")</script><img src="http://evil.example/x.png">'


def hostile_referee(request: GenerationRequest) -> str:
    """A referee whose talk carries markup; its verdicts are the scripted ones."""
    return (
        prompt_dependent(request)
        if asks_for_scores(request)
        else f"{HOSTILE_MARKUP} {prompt_dependent(request)}"
    )


def hostile_direct_referee(request: GenerationRequest) -> str:
    """A referee of the direct task whose talk carries markup; its scores depend on what it was
    shown."""
    n = sum(map(ord, prompt_text(request)))
    if not asks_for_scores(request):
        return f"{HOSTILE_MARKUP} remark {n}"
    scores = f"Naturalness: {n % 3 + 1}\nCoherence: {n % 2 + 2}\nEngagingness: 2\nGroundedness: {n % 2}"
    return scores + "\nEvidence: ok"


# An engine whose running requests report their tokens (the progress bar) ----------------------


class LiveTokensBackend(StreamingScriptedBackend):
    """A streaming scripted backend that, like vLLM, knows the tokens its running requests have
    generated so far: every poll advances each queued request by ``per_poll_tokens``, and only
    ``per_poll`` requests finish per poll. ``seen`` keeps the bar's line after every poll."""

    def __init__(self, model: str, responder: Responder, per_poll: int = 1, per_poll_tokens: int = 5) -> None:
        super().__init__(model, responder, per_poll)
        self.per_poll_tokens = per_poll_tokens
        self.progress: dict[str, int] = {}

    def submit(self, key: str, request: GenerationRequest) -> None:
        super().submit(key, request)
        self.progress[key] = 0

    def poll(self) -> list[tuple[str, GenerationResult]]:
        finished = super().poll()
        for key, _ in finished:
            self.progress.pop(key)
        for key in self.progress:
            self.progress[key] += self.per_poll_tokens
        return finished

    def running_tokens(self) -> int:
        return sum(self.progress.values())
