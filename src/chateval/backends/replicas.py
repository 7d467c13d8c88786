"""Several replicas of one model behind one streaming backend (scale-out).

The driver (scheduler, journal, resume) stays where the command runs; each replica holds an
ordinary backend (a vLLM engine) somewhere else, in a Ray actor on any node of a cluster. The
driver talks to a replica through one call at a time, ``step(new requests)``: the replica
queues them, runs its engine until something finishes (or a short time passes), and answers
with what finished. So every replica's engine runs while the driver collects from whichever
replica answers first.

Every turn of one item, in both answer orders, goes to the same replica: its later turns extend
prompts that replica's prefix cache already holds.
"""

import concurrent.futures
import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from chateval.core.backend import (
    Backend,
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    HFTokenCounting,
    Keep,
    StreamingBackend,
    TokenCounter,
    collect_in_order,
)
from chateval.errors import BackendError

_STEP_BUDGET_S = 0.05  # a replica answers once something finished and this much time passed
# ... and after this long even when nothing finished: a replica that answers nothing for far
# longer than this is hung (ReplicaSet's stall_timeout_s), not busy with long generations.
_STEP_MAX_S = 5.0
SWAPPED_SUFFIX = "#swapped"  # a debate of the swapped answer order: key = item id + this


@dataclass
class StepReport:
    """What one ``step`` call did on a replica."""

    finished: list[tuple[str, GenerationResult]]
    busy_seconds: float
    engine_steps: int = 0  # the engine's steps (polls) it ran; 1 for a one-batch backend


@dataclass
class ReplicaStats:
    """One replica's share of a run (run.json ``replicas``)."""

    replica: int
    node: str
    requests: int = 0
    prompt_tokens: int = 0
    generated_tokens: int = 0
    busy_seconds: float = 0.0
    engine_steps: int = 0
    items: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {**vars(self), "busy_seconds": round(self.busy_seconds, 3)}


class ReplicaWorker:
    """The replica side: one backend, fed and drained by ``step``. Runs inside a Ray actor (or
    a thread, for tests); knows nothing of the driver."""

    def __init__(self, load: Callable[[], Backend]) -> None:
        self.backend = load()
        self.pending: set[str] = set()

    def step(self, new: Sequence[tuple[str, GenerationRequest]]) -> StepReport:
        """Queue ``new``; run until something finishes and ``_STEP_BUDGET_S`` passed, the
        queue is empty, or ``_STEP_MAX_S`` passed."""
        started = time.perf_counter()
        backend = self.backend
        if not isinstance(backend, StreamingBackend):  # one batch: everything finishes now
            results = backend.generate([request for _, request in new])
            done = [(key, result) for (key, _), result in zip(new, results, strict=True)]
            return StepReport(done, time.perf_counter() - started, engine_steps=1)
        for key, request in new:
            backend.submit(key, request)
            self.pending.add(key)
        finished: list[tuple[str, GenerationResult]] = []
        steps = 0
        while self.pending:
            steps += 1
            for key, result in backend.poll():
                self.pending.discard(key)
                finished.append((key, result))
            spent = time.perf_counter() - started
            if (finished and spent >= _STEP_BUDGET_S) or spent >= _STEP_MAX_S:
                break
        return StepReport(finished, time.perf_counter() - started, steps)

    def node(self) -> str:
        """Where this replica runs (host name)."""
        import socket

        return socket.gethostname()

    def close(self) -> None:
        self.backend.close()


class ReplicaHandle(Protocol):
    """The driver's end of one replica: calls that answer with futures."""

    name: str

    def step(self, new: list[tuple[str, GenerationRequest]]) -> "concurrent.futures.Future[StepReport]":
        """Start one ``step`` on the replica."""
        ...

    def close(self) -> None:
        """Stop the replica (its engine and process)."""
        ...


@dataclass
class _Lane:
    """The driver's state of one replica."""

    handle: ReplicaHandle
    stats: ReplicaStats
    outbox: list[tuple[str, GenerationRequest]] = field(default_factory=list)
    call: "concurrent.futures.Future[StepReport] | None" = None
    sent_at: float = 0.0  # when ``call`` started (monotonic)
    in_flight: int = 0  # requests sent, not yet finished


def item_of(request_key: str) -> str:
    """The item a scheduler request key belongs to (``debate\\x1fslot\\x1fcounter``; a debate
    key is the item id, with ``#swapped`` for the other answer order)."""
    debate = request_key.split("\x1f", 1)[0]
    return debate.removesuffix(SWAPPED_SUFFIX)


class ReplicaSet:
    """One model served by several replicas, as one streaming backend. A replica whose step
    call has not answered for ``stall_timeout_s`` fails the run with a BackendError."""

    def __init__(
        self,
        model: str,
        handles: Sequence[ReplicaHandle],
        nodes: Sequence[str],
        counter: TokenCounter,
        stall_timeout_s: float = 600.0,
    ):
        if not handles:
            raise ValueError("a replica set needs at least one replica")
        self.model = model
        self.stall_timeout_s = stall_timeout_s
        self.counter = counter
        self.context_window = counter.context_window
        self._lanes = [
            _Lane(h, ReplicaStats(i, node)) for i, (h, node) in enumerate(zip(handles, nodes, strict=True))
        ]
        self._home: dict[str, _Lane] = {}  # item -> its replica
        self._counter = 0

    # Token counting happens on the driver, with the model's tokenizer.
    def count_prompt_tokens(self, messages: Sequence[ChatMessage]) -> int:
        return self.counter.count_prompt_tokens(messages)

    def count_tokens(self, text: str) -> int:
        return self.counter.count_tokens(text)

    def truncate_tokens(self, text: str, max_tokens: int, keep: Keep = "start") -> str:
        return self.counter.truncate_tokens(text, max_tokens, keep)

    def replaced_system_prompt(self) -> str | None:
        """As HFTokenCounting's: the replicas send what the driver's tokenizer says."""
        return self.counter.replaced_system_prompt() if isinstance(self.counter, HFTokenCounting) else None

    def digit_tokens(self) -> dict[int, str]:
        if not isinstance(self.counter, HFTokenCounting):
            raise BackendError(f"model {self.model!r}: its token counter holds no vocabulary")
        return self.counter.digit_tokens()

    # Streaming --------------------------------------------------------------------------------
    def submit(self, key: str, request: GenerationRequest) -> None:
        """Queue ``request`` for its item's replica (the least loaded one, for a new item)."""
        item = item_of(key)
        lane = self._home.get(item)
        if lane is None:
            lane = min(self._lanes, key=lambda candidate: (candidate.stats.items, candidate.stats.replica))
            lane.stats.items += 1
            self._home[item] = lane
        lane.outbox.append((key, request))
        lane.in_flight += 1  # sent with the lane's next call, from poll or wait

    def poll(self) -> list[tuple[str, GenerationResult]]:
        """What the replicas that answered finished. Queued requests go out first, all of a
        replica's at once in its next call (so the turns the scheduler just submitted travel
        together, not one by one)."""
        self._send_all()
        finished: list[tuple[str, GenerationResult]] = []
        for lane in self._lanes:
            if lane.call is not None and lane.call.done():
                finished += self._report(lane).finished
            elif lane.call is not None and time.monotonic() - lane.sent_at > self.stall_timeout_s:
                raise BackendError(
                    f"model {self.model!r}: replica {lane.stats.replica} ({lane.handle.name}, node "
                    f"{lane.stats.node}) has not answered for {self.stall_timeout_s:g} s: its engine or "
                    "node is hung (scale.stall_timeout_s)"
                )
        return finished

    def wait(self, timeout: float) -> None:
        """Block until a replica answers or ``timeout`` seconds pass."""
        self._send_all()
        calls = [lane.call for lane in self._lanes if lane.call is not None]
        if calls:
            concurrent.futures.wait(calls, timeout=timeout, return_when=concurrent.futures.FIRST_COMPLETED)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """All ``requests`` (request ``i`` treated as item ``i``), results in order."""
        first, self._counter = self._counter, self._counter + len(requests)
        keyed = [(f"batch{first + i}\x1f0\x1f0", request) for i, request in enumerate(requests)]
        return collect_in_order(self, keyed)

    def _send_all(self) -> None:
        """Start the next step call of every idle replica that has work."""
        for lane in self._lanes:
            if lane.call is None and lane.in_flight:
                new, lane.outbox = lane.outbox, []
                lane.call = lane.handle.step(new)
                lane.sent_at = time.monotonic()

    def _report(self, lane: _Lane) -> StepReport:
        call, lane.call = lane.call, None
        assert call is not None
        try:
            report = call.result()
        except Exception as exc:  # a dead actor, a node gone, an engine error inside
            raise BackendError(
                f"model {self.model!r}: replica {lane.stats.replica} ({lane.handle.name}, node "
                f"{lane.stats.node}) failed: {type(exc).__name__}: {str(exc).strip()[:500]}"
            ) from exc
        lane.in_flight -= len(report.finished)
        lane.stats.busy_seconds += report.busy_seconds
        lane.stats.engine_steps += report.engine_steps
        for _, result in report.finished:
            lane.stats.requests += 1
            lane.stats.prompt_tokens += result.prompt_tokens
            lane.stats.generated_tokens += result.generated_tokens
        return report

    def replica_stats(self) -> list[dict[str, Any]]:
        """Requests, tokens and busy seconds per replica (run.json)."""
        return [lane.stats.as_dict() for lane in self._lanes]

    def close(self) -> None:
        for lane in self._lanes:
            with contextlib.suppress(Exception):  # a dead replica has nothing left to close
                lane.handle.close()


class ThreadReplica:
    """A replica in a thread of this process: for tests with scripted backends, and to measure
    what one driver can feed (docs/scaling.md)."""

    def __init__(self, name: str, worker: ReplicaWorker) -> None:
        self.name = name
        self.worker = worker
        self._pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix=name)

    def step(self, new: list[tuple[str, GenerationRequest]]) -> "concurrent.futures.Future[StepReport]":
        return self._pool.submit(self.worker.step, new)

    def close(self) -> None:
        self._pool.submit(self.worker.close).result()
        self._pool.shutdown()
