"""What a run's backends did: requests, tokens, batches and engine steps, per model."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from chateval.core.backend import GenerationResult
from chateval.core.schema import Counts


@dataclass
class ModelUsage:
    """Counts for one model.

    ``batches``: backend calls of step-barrier runs (one batch of requests each);
    ``engine_steps``: engine steps polled by streaming runs (one decoding step each). A run
    counts one or the other.
    """

    batches: int = 0
    engine_steps: int = 0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    cached_tokens: int = 0

    def add(self, results: Sequence[GenerationResult], batches: int = 1) -> None:
        self.batches += batches
        self.requests += len(results)
        self.prompt_tokens += sum(r.prompt_tokens for r in results)
        self.completion_tokens += sum(r.completion_tokens for r in results)
        self.cached_tokens += sum(r.cached_tokens for r in results)

    def counts(self) -> Counts:
        """The counts as run.json and the journal store them."""
        return {
            "batches": self.batches,
            "engine_steps": self.engine_steps,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cached_tokens": self.cached_tokens,
        }

    def merge(self, other: "ModelUsage") -> None:
        for key, value in vars(other).items():
            setattr(self, key, getattr(self, key) + value)


@dataclass
class Usage:
    """Counts for a whole run, in total and per model."""

    steps: int = 0
    per_model: dict[str, ModelUsage] = field(default_factory=dict)

    def total(self) -> ModelUsage:
        total = ModelUsage()
        for usage in self.per_model.values():
            total.merge(usage)
        return total
