"""The scheduler: runs a panel's plan over ALL debates, one backend call per model per step.

For every step of the plan it asks the panel for the request of each (debate, turn), groups the
requests by model, sends each group to that model's backend in ONE call, and appends the
results to the transcripts. 80 items x 2 agents x 2 rounds under one_by_one is 4 steps, so 4
backend calls for a single-model panel.
"""

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from chateval.backends.base import Backend, GenerationRequest, GenerationResult
from chateval.debate.panel import Debate, Panel
from chateval.debate.transcript import Utterance
from chateval.errors import BackendError
from chateval.placement import ModelPool


@dataclass
class ModelUsage:
    """Counts for one model."""

    backend_calls: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, results: Sequence[GenerationResult]) -> None:
        self.backend_calls += 1
        self.requests += len(results)
        self.prompt_tokens += sum(r.prompt_tokens for r in results)
        self.completion_tokens += sum(r.completion_tokens for r in results)


@dataclass
class Usage:
    """Counts for a whole run, in total and per model."""

    steps: int = 0
    per_model: dict[str, ModelUsage] = field(default_factory=dict)

    def total(self) -> ModelUsage:
        total = ModelUsage()
        for usage in self.per_model.values():
            total.backend_calls += usage.backend_calls
            total.requests += usage.requests
            total.prompt_tokens += usage.prompt_tokens
            total.completion_tokens += usage.completion_tokens
        return total


StepCallback = Callable[[int, int, int], None]
"""Called before each step with (step number from 1, number of steps, requests in the step)."""

StepDone = Callable[[int, list[tuple[Debate, Utterance]], dict[str, ModelUsage]], None]
"""Called after each step with (step index from 0, its new utterances, its usage per model)."""


class Scheduler:
    """Drives debates step by step, batching every ready request of a step per model."""

    def __init__(
        self, backends: Mapping[str, Backend] | ModelPool, on_step: StepCallback | None = None
    ) -> None:
        self.pool = backends if isinstance(backends, ModelPool) else ModelPool.fixed(backends)
        self.on_step = on_step
        self.usage = Usage()

    def run(
        self,
        panel: Panel,
        debates: Sequence[Debate],
        *,
        start_step: int = 0,
        on_step_done: StepDone | None = None,
    ) -> Usage:
        """Run the steps of ``panel``'s plan from ``start_step`` over all ``debates``.

        Transcripts grow in place; steps before ``start_step`` must already be in them (resume).
        """
        plan = panel.plan()
        for index in range(start_step, len(plan)):
            pending = [(debate, turn) for debate in debates for turn in plan[index]]
            if self.on_step is not None:
                self.on_step(index + 1, len(plan), len(pending))
            before = {m: ModelUsage(**vars(u)) for m, u in self.usage.per_model.items()}
            results = self.generate([panel.request(debate, turn) for debate, turn in pending])
            added = []
            for (debate, turn), result in zip(pending, results, strict=True):
                utterance = panel.utterance(turn, result)
                debate.transcript = debate.transcript.add(utterance)
                added.append((debate, utterance))
            self.usage.steps += 1
            if on_step_done is not None:
                on_step_done(index, added, _difference(self.usage.per_model, before))
        return self.usage

    def generate(self, requests: Sequence[GenerationRequest]) -> list[GenerationResult]:
        """One backend call per model, resident models first; results in request order."""
        by_model: dict[str, list[int]] = defaultdict(list)
        for index, request in enumerate(requests):
            by_model[request.model].append(index)
        results: list[GenerationResult | None] = [None] * len(requests)
        for model in self.pool.order(by_model):
            indices = by_model[model]
            backend = self.pool.get(model)
            batch = backend.generate([requests[i] for i in indices])
            if len(batch) != len(indices):
                raise BackendError(
                    f"backend for {model!r} returned {len(batch)} results for {len(indices)} requests"
                )
            self.usage.per_model.setdefault(model, ModelUsage()).add(batch)
            for i, result in zip(indices, batch, strict=True):
                results[i] = result
        return [r for r in results if r is not None]


def _difference(now: dict[str, ModelUsage], before: dict[str, ModelUsage]) -> dict[str, ModelUsage]:
    out = {}
    for model, usage in now.items():
        old = before.get(model, ModelUsage())
        out[model] = ModelUsage(
            usage.backend_calls - old.backend_calls,
            usage.requests - old.requests,
            usage.prompt_tokens - old.prompt_tokens,
            usage.completion_tokens - old.completion_tokens,
        )
    return out
