"""What a run's backends did: requests, tokens, batches and engine steps, per model."""

from collections.abc import Sequence
from dataclasses import dataclass, field

from chateval.core.backend import GenerationResult
from chateval.schema.run_info import Counts


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
    generated_tokens: int = 0

    cached_prompt_tokens: int = 0

    def add(self, results: Sequence[GenerationResult], batches: int = 1) -> None:
        self.batches += batches
        self.requests += len(results)
        self.prompt_tokens += sum(r.prompt_tokens for r in results)
        self.generated_tokens += sum(r.generated_tokens for r in results)
        self.cached_prompt_tokens += sum(r.cached_prompt_tokens for r in results)

    def counts(self) -> Counts:
        """The counts as run.json and the journal store them (files of earlier releases read
        through chateval.record.migrations.counts_as_today)."""
        return {
            "batches": self.batches,
            "engine_steps": self.engine_steps,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "generated_tokens": self.generated_tokens,
            "cached_prompt_tokens": self.cached_prompt_tokens,
        }

    @classmethod
    def from_counts(cls, counts: Counts) -> "ModelUsage":
        """Usage back from its ``counts``."""
        return cls(**counts)

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
