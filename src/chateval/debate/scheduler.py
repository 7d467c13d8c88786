"""The scheduler: runs a panel's plan over ALL debates, one backend call per model per step.

For every step of the plan it asks the panel for the request of each (debate, turn), groups the
requests by model, sends each group to that model's backend in ONE call, and appends the
results to the transcripts. 80 items x 2 agents x 2 rounds under one_by_one is 4 steps, so 4
backend calls for a single-model panel.
"""

import time
from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence

from chateval.core.backend import (
    Backend,
    BackendPool,
    FixedPool,
    GenerationRequest,
    GenerationResult,
    LiveTokens,
    RemoteBackend,
    StreamingBackend,
)
from chateval.core.progress import Progress
from chateval.core.transcript import Debate, Turn, Utterance
from chateval.core.usage import ModelUsage, Usage
from chateval.debate.panel import Panel
from chateval.debate.strategies import Step
from chateval.errors import BackendError

StepCallback = Callable[[int, int, int], None]
"""Called before each step with (step number from 1, number of steps, requests in the step)."""

StepDone = Callable[[int, list[tuple[Debate, Utterance]], dict[str, ModelUsage]], None]
"""Called after each step with (step index from 0, its new utterances, its usage per model)."""

DebateStepDone = Callable[[int, Debate, list[Utterance], dict[str, ModelUsage]], None]
"""Streaming: called when one debate finishes a step (step index, debate, utterances, usage)."""

DebateDone = Callable[[Debate], Sequence[Debate]]
"""Called when a debate is over; the debates it returns join the run (an adaptive run's next
waves of comparisons)."""


# A streaming run is stalled (an engine that lost a request would spin forever) when its
# engines have finished nothing for this many polls AND this long: polls are cheap while an
# engine waits on something else (vLLM compiling a constraint for a large vocabulary takes
# seconds, its empty steps microseconds), slow while it decodes a long batch (a big batch's
# prefill takes tens of steps), so neither bound alone tells a stall from work.
_MAX_IDLE_POLLS = 100_000
_MAX_IDLE_SECONDS = 600.0
_REMOTE_WAIT_S = 0.05  # longest sleep between polls when only servers are busy


class Scheduler:
    """Drives debates through the panel's plan, batching every ready request per model.

    Two ways to run the plan, with identical results under greedy decoding:

    - barrier (``run``): step by step; each step is ONE backend call per model over all debates.
    - streaming (``run_streaming``): each debate's next step is submitted the moment its
      previous one finishes, into engines that keep running (no idle engine while the slowest
      debate of a step finishes). Needs backends that implement StreamingBackend.
    """

    def __init__(
        self,
        backends: Mapping[str, Backend] | BackendPool,
        on_step: StepCallback | None = None,
        progress: Progress | None = None,
    ) -> None:
        self.pool: BackendPool = FixedPool(backends) if isinstance(backends, Mapping) else backends
        self.on_step = on_step
        # Debates finished of all, requests and tokens; its work (for the ETA) is debate steps.
        self.progress = progress or Progress()
        self.usage = Usage()

    def can_stream(self, models: Sequence[str]) -> bool:
        """Every one of ``models`` is resident and accepts streamed requests."""
        resident = set(self.pool.resident())
        return all(m in resident and isinstance(self.pool.get(m), StreamingBackend) for m in models)

    def run(
        self,
        panel: Panel,
        debates: Sequence[Debate],
        *,
        progress: Mapping[str, int] | None = None,
        on_step_done: StepDone | None = None,
        on_debate_done: DebateDone | None = None,
    ) -> Usage:
        """Run the plan step by step over all ``debates`` (barrier mode).

        ``progress`` maps debate keys to the steps already in their transcripts (resume).
        ``on_debate_done`` is called for each debate once the plan has run over all of them;
        the debates it returns run next, as a batch of their own (the plan from its first step
        again), and so on until it returns none.
        """
        plan = panel.plan()
        given = progress or {}

        def resumed(batch: Sequence[Debate]) -> tuple[dict[str, int], set[str]]:
            """The steps each debate of ``batch`` has done, and those finished before a resume."""
            done = {d.key: min(given.get(d.key, 0), len(plan)) for d in batch}
            return done, {d.key for d in batch if done[d.key] == len(plan)}

        batch = list(debates)
        done, counted = resumed(batch)
        self.progress.start(len(batch), len(counted), len(batch) * len(plan), sum(done.values()))
        while True:
            self._run_steps(panel, plan, batch, done, counted, on_step_done)
            batch = [new for debate in batch for new in on_debate_done(debate)] if on_debate_done else []
            if not batch:
                break
            done, counted = resumed(batch)
            self.progress.grow(len(batch), len(batch) * len(plan), sum(done.values()))
            self.progress.update(len(counted))
        self.usage.steps = len(plan)
        return self.usage

    def _run_steps(
        self,
        panel: Panel,
        plan: Sequence[Step],
        debates: Sequence[Debate],
        done: Mapping[str, int],
        counted: set[str],
        on_step_done: StepDone | None,
    ) -> None:
        """Every step of the plan that some of ``debates`` has not done (``done``: the steps each
        has done), one backend call per model per step; ``counted``: the debates the bar counts
        as finished."""
        bar = self.progress
        for index in range(min(done.values(), default=len(plan)), len(plan)):
            step = plan[index]
            due = {d.key: panel.due(d, step) if done[d.key] <= index else [] for d in debates}
            pending = [(debate, turn) for debate in debates for turn in due[debate.key]]
            if self.on_step is not None:
                self.on_step(index + 1, len(plan), len(pending))
            before = {m: ModelUsage(**vars(u)) for m, u in self.usage.per_model.items()}
            stepped = [d for d in debates if done[d.key] <= index]
            work = _StepWork(bar, len(stepped), len(pending))
            results = iter(self.generate([panel.request(d, turn) for d, turn in pending], work.finished))
            added = []
            for debate in debates:
                mine = [next(results) for _ in due[debate.key]]
                added += [(debate, u) for u in panel.advance(debate, step, due[debate.key], mine)]
            for debate, utterance in added:
                panel.warn_if_unusable(debate, utterance)
            if on_step_done is not None:
                on_step_done(index, added, _difference(self.usage.per_model, before))
            over = [d for d in stepped if d.key not in counted and ended(panel, d, plan[index + 1 :])]
            counted.update(d.key for d in over)
            bar.update(len(over), len(stepped) - work.moved)

    def run_streaming(
        self,
        panel: Panel,
        debates: Sequence[Debate],
        *,
        progress: Mapping[str, int] | None = None,
        on_debate_step: DebateStepDone | None = None,
        on_debate_done: DebateDone | None = None,
    ) -> Usage:
        """Run the plan with no step barrier: each debate advances as soon as it can.

        ``on_debate_done`` is called as each debate ends (at the start, for those a resumed run
        finished before); the debates it returns are submitted at once, into engines still busy
        with the others.
        """
        stream = _Stream(self, panel, debates, progress or {}, on_debate_step, on_debate_done)
        over = [debate for debate in debates if not stream.submit_next(debate)]  # finished before a resume
        self.progress.start(
            len(debates), len(over), len(debates) * len(stream.plan), sum(stream.done.values())
        )
        stream.after(over)
        idle, idle_since = 0, time.monotonic()
        while stream.waiting:
            busy = [m for m, keys in stream.in_flight.items() if keys]
            progressed = False
            for model in busy:
                progressed = stream.poll(model) or progressed
            if progressed:
                idle, idle_since = 0, time.monotonic()
            else:
                idle += 1
                _wait_if_all_remote([self.pool.get(m) for m in busy])
            stalled = idle > _MAX_IDLE_POLLS and time.monotonic() - idle_since > _MAX_IDLE_SECONDS
            if stalled or (stream.waiting and not any(stream.in_flight.values())):
                raise BackendError(
                    f"streaming stalled: {sum(map(len, stream.in_flight.values()))} requests never finished"
                )
        self.usage.steps = len(stream.plan)
        return self.usage

    def generate(
        self, requests: Sequence[GenerationRequest], on_finished: Callable[[int], None] | None = None
    ) -> list[GenerationResult]:
        """One batch per model, resident models first; results in request order.
        ``on_finished`` hears how many requests finished, as they do."""
        by_model: dict[str, list[int]] = defaultdict(list)
        for index, request in enumerate(requests):
            by_model[request.model].append(index)
        results: list[GenerationResult | None] = [None] * len(requests)
        for model in self.pool.order(by_model):
            indices = by_model[model]
            backend = self.pool.get(model)
            if isinstance(backend, LiveTokens):
                batch = self._stream_batch(backend, [requests[i] for i in indices], on_finished)
            else:
                batch = backend.generate([requests[i] for i in indices])
                if on_finished is not None:
                    on_finished(len(batch))
                self.progress.add_requests(len(batch), sum(r.generated_tokens for r in batch))
            if len(batch) != len(indices):
                raise BackendError(
                    f"backend for {model!r} returned {len(batch)} results for {len(indices)} requests"
                )
            self.usage.per_model.setdefault(model, ModelUsage()).add(batch)
            for i, result in zip(indices, batch, strict=True):
                results[i] = result
        return [r for r in results if r is not None]

    def _stream_batch(
        self,
        backend: LiveTokens,
        requests: Sequence[GenerationRequest],
        on_finished: Callable[[int], None] | None,
    ) -> list[GenerationResult]:
        """A batch submitted whole and stepped to its end, as the engine's own batch call does
        (same requests, same order), but with each engine step's finished requests and running
        tokens told to the bar."""
        keys = [f"batch\x1f{i}" for i in range(len(requests))]
        for key, request in zip(keys, requests, strict=True):
            backend.submit(key, request)
        results: dict[str, GenerationResult] = {}
        while len(results) < len(keys):
            finished = backend.poll()
            results.update(finished)
            if finished and on_finished is not None:
                on_finished(len(finished))
            _tell_bar(self.progress, backend, finished)
        return [results[key] for key in keys]


def _tell_bar(
    bar: Progress, backend: StreamingBackend, finished: Sequence[tuple[str, GenerationResult]]
) -> None:
    """One engine step's finished requests and their tokens, and the tokens of those still
    running where the backend knows them."""
    running = backend.running_tokens() if isinstance(backend, LiveTokens) else None
    bar.add_requests(len(finished), sum(r.generated_tokens for _, r in finished), running)


class _StepWork:
    """A barrier step's work on the bar (one unit per debate it steps), moved by each finished
    request's share as requests finish, so a long step shows an ETA before it ends."""

    def __init__(self, bar: Progress, debates: int, requests: int) -> None:
        self.bar = bar
        self.share = debates / requests if requests else 0.0
        self.moved = 0.0

    def finished(self, requests: int) -> None:
        self.bar.update(work=requests * self.share)
        self.moved += requests * self.share


class _Stream:
    """The state of one streaming run: where each debate is in the plan, the requests of its
    step in flight, and the engine steps not yet journaled."""

    def __init__(
        self,
        scheduler: Scheduler,
        panel: Panel,
        debates: Sequence[Debate],
        progress: Mapping[str, int],
        on_debate_step: DebateStepDone | None,
        on_debate_done: DebateDone | None,
    ) -> None:
        self.scheduler = scheduler
        self.panel = panel
        self.plan = panel.plan()
        self.on_debate_step = on_debate_step
        self.on_debate_done = on_debate_done
        self.progress = progress
        self.done = {d.key: progress.get(d.key, 0) for d in debates}  # steps finished per debate
        self.by_key = {d.key: d for d in debates}
        self.waiting: dict[str, dict[int, GenerationResult | None]] = {}  # debate -> turn slot -> result
        self.due: dict[str, list[Turn]] = {}  # debate -> the turns of its step in flight
        self.routed: dict[str, list[str]] = {}  # debate -> the model of each of those turns
        self.in_flight: dict[str, set[str]] = defaultdict(set)  # model -> keys queued in its engine
        self.polls: dict[str, int] = defaultdict(int)  # engine steps not yet journaled, per model
        self.counter = 0  # makes every request key unique

    def after(self, ended: Sequence[Debate]) -> None:
        """Tell ``on_debate_done`` of each of the ``ended`` debates and submit the debates it
        returns; those a resumed run had finished are over at once, and told of in turn."""
        queue = deque(ended)
        bar = self.scheduler.progress
        while queue and self.on_debate_done is not None:
            new = self.on_debate_done(queue.popleft())
            if not new:
                continue
            for debate in new:
                self.by_key[debate.key] = debate
                self.done[debate.key] = self.progress.get(debate.key, 0)
            bar.grow(len(new), len(new) * len(self.plan), sum(self.done[d.key] for d in new))
            over = [debate for debate in new if not self.submit_next(debate)]
            bar.update(len(over))
            queue.extend(over)

    def submit_next(self, debate: Debate) -> bool:
        """Submit the debate's next step with turns to run; False: the debate is over."""
        done, plan, panel = self.done, self.plan, self.panel
        while done[debate.key] < len(plan):
            turns = panel.due(debate, plan[done[debate.key]])
            if turns:
                self.due[debate.key] = turns
                self.waiting[debate.key] = dict.fromkeys(range(len(turns)))
                self.routed[debate.key] = []
                for slot, turn in enumerate(turns):
                    request = panel.request(debate, turn)
                    backend = self.scheduler.pool.get(request.model)
                    assert isinstance(backend, StreamingBackend)
                    key = f"{debate.key}\x1f{slot}\x1f{self.counter}"
                    backend.submit(key, request)
                    self.routed[debate.key].append(request.model)
                    self.in_flight[request.model].add(key)
                    self.counter += 1
                return True
            done[debate.key] += 1  # nothing to do in this step for this debate
            self.scheduler.progress.update(work=1)
        return False

    def poll(self, model: str) -> bool:
        """One poll of ``model``'s engine; finish every debate whose step it completed. True:
        some request finished."""
        backend = self.scheduler.pool.get(model)
        assert isinstance(backend, StreamingBackend)
        finished = [(k, r) for k, r in backend.poll() if k in self.in_flight[model]]
        if not isinstance(backend, RemoteBackend):
            self.polls[model] += 1  # a server's poll is no engine step
        _tell_bar(self.scheduler.progress, backend, finished)
        for key, result in finished:
            self.in_flight[model].discard(key)
            debate_key, slot, _ = key.split("\x1f")
            self.waiting[debate_key][int(slot)] = result
        for debate_key in dict.fromkeys(k.split("\x1f")[0] for k, _ in finished):
            if all(r is not None for r in self.waiting[debate_key].values()):
                self.finish(self.by_key[debate_key])
        return bool(finished)

    def finish(self, debate: Debate) -> None:
        """Settle the debate's finished step, journal it, and submit its next one."""
        index = self.done[debate.key]
        results = [r for _, r in sorted(self.waiting.pop(debate.key).items()) if r is not None]
        step_usage: dict[str, ModelUsage] = {}
        for result, model in zip(results, self.routed.pop(debate.key), strict=True):
            step_usage.setdefault(model, ModelUsage()).add([result], batches=0)
        # Engine steps so far go into this marker, so a resumed run's counts stay whole.
        for model in list(self.polls):
            step_usage.setdefault(model, ModelUsage()).engine_steps += self.polls.pop(model)
        settled = self.panel.advance(debate, self.plan[index], self.due.pop(debate.key), results)
        for utterance in settled:
            self.panel.warn_if_unusable(debate, utterance)
        usage = self.scheduler.usage
        for model, counts in step_usage.items():
            usage.per_model.setdefault(model, ModelUsage()).merge(counts)
        if self.on_debate_step is not None:
            self.on_debate_step(index, debate, settled, step_usage)
        self.done[debate.key] += 1
        self.scheduler.progress.update(work=1)
        if not self.submit_next(debate):
            self.scheduler.progress.update(1)
            self.after([debate])


def ended(panel: Panel, debate: Debate, rest: Sequence[Step]) -> bool:
    """No step of ``rest`` has a turn left for ``debate`` (the last step is done, or the debate
    stopped early and has no probes to answer)."""
    return not rest or (panel.finished(debate) and not any(panel.due(debate, step) for step in rest))


def _wait_if_all_remote(backends: Sequence[Backend]) -> None:
    """Nothing finished: if every busy backend is a server, sleep until one answers (a local
    engine's poll computes, so with one of those busy the loop is paced already)."""
    remote = [b for b in backends if isinstance(b, RemoteBackend)]
    if remote and len(remote) == len(backends):
        for backend in remote:
            backend.wait(_REMOTE_WAIT_S / len(remote))


def _difference(now: dict[str, ModelUsage], before: dict[str, ModelUsage]) -> dict[str, ModelUsage]:
    out = {}
    for model, usage in now.items():
        old = before.get(model, ModelUsage())
        out[model] = ModelUsage(**{k: v - getattr(old, k) for k, v in vars(usage).items()})
    return out
