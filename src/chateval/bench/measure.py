"""Measuring a bench mode: backends that record every request and result they see, and one
mode's time, tokens, prefix-cache hits and peak memory (the prefix cache is reset first, so no
mode profits from another's prompts)."""

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from chateval.core.backend import Backend, GenerationRequest, GenerationResult, StreamingBackend


class RecordingBackend:
    """Forwards to a backend and keeps every request and result it sees."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.requests: list[GenerationRequest] = []
        self.results: list[GenerationResult] = []
        self._keys: dict[str, GenerationRequest] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        results = self.inner.generate(requests)
        self.requests += requests
        self.results += results
        return results


class StreamingRecorder(RecordingBackend):
    """A recorder for a streaming backend: it streams too."""

    def __init__(self, inner: StreamingBackend) -> None:
        super().__init__(inner)
        self.streaming = inner

    def submit(self, key: str, request: GenerationRequest) -> None:
        self._keys[key] = request
        self.streaming.submit(key, request)

    def poll(self) -> list[tuple[str, GenerationResult]]:
        finished = self.streaming.poll()
        for key, result in finished:
            self.requests.append(self._keys.pop(key))
            self.results.append(result)
        return finished


def recording(backend: Backend) -> RecordingBackend:
    """``backend``, wrapped so it records what it serves (streaming if it streams)."""
    if isinstance(backend, StreamingBackend):
        return StreamingRecorder(backend)
    return RecordingBackend(backend)


@dataclass
class ModeResult:
    """What one mode did and how long it took."""

    mode: str
    seconds: float
    requests: int
    prompt_tokens: int
    generated_tokens: int
    cached_prompt_tokens: int
    peak_memory_gib: float | None
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "seconds": round(self.seconds, 3),
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
            "generated_tokens_per_second": round(self.generated_tokens / self.seconds, 2)
            if self.seconds
            else None,
            "prefix_cache_hit_rate": round(self.cached_prompt_tokens / self.prompt_tokens, 4)
            if self.prompt_tokens
            else None,
            "peak_memory_gib": self.peak_memory_gib,
            "note": self.note,
            **self.extra,
        }


def _reset_peak_memory() -> None:
    """Start a fresh high-water mark: CUDA's allocator stats, or the process's peak RSS."""
    import torch

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()  # in-process engines (transformers) only
        return
    try:  # Linux: writing 5 to clear_refs resets VmHWM
        with open("/proc/self/clear_refs", "w", encoding="ascii") as handle:
            handle.write("5")
    except OSError:
        pass


def _peak_memory_gib() -> float | None:
    import torch

    if torch.cuda.is_available():
        # This process's allocator peak, or the device's memory in use when an engine lives in
        # another process or preallocates (vLLM): whichever is larger.
        free, total = torch.cuda.mem_get_info()
        return round(max(torch.cuda.max_memory_allocated(), total - free) / 2**30, 3)
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 2**20, 3)
    except OSError:
        pass
    return None


def _reset_caches(backends: Sequence[Backend]) -> None:
    for backend in backends:
        reset = getattr(backend, "reset_cache", None)
        if callable(reset):
            reset()


def measure(
    mode: str, backends: Sequence[RecordingBackend], work: Callable[[], None], note: str = ""
) -> ModeResult:
    """Run ``work`` (one mode) on fresh caches and empty records; what it did and cost."""
    _reset_caches([b.inner for b in backends])
    for backend in backends:
        backend.requests, backend.results = [], []
    _reset_peak_memory()
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    results = [r for b in backends for r in b.results]
    return ModeResult(
        mode,
        seconds,
        len(results),
        sum(r.prompt_tokens for r in results),
        sum(r.generated_tokens for r in results),
        sum(r.cached_prompt_tokens for r in results),
        _peak_memory_gib(),
        note,
    )
