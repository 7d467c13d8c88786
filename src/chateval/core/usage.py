"""What a run's backends did: requests, tokens, batches and engine steps, per model."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chateval.core.backend import GenerationResult
from chateval.core.schema.records import Counts

# Field -> the key run.json and the journal store it under (the first release's names).
STORED_NAMES = {"generated_tokens": "completion_tokens", "cached_prompt_tokens": "cached_tokens"}


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
        """The counts as run.json and the journal store them: under the names of the first
        release for generated and cached prompt tokens (``STORED_NAMES``), so files stay
        readable across releases."""
        return {
            "batches": self.batches,
            "engine_steps": self.engine_steps,
            "requests": self.requests,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.generated_tokens,  # STORED_NAMES
            "cached_tokens": self.cached_prompt_tokens,
        }

    @classmethod
    def from_counts(cls, counts: Mapping[str, int]) -> "ModelUsage":
        """Usage back from its stored ``counts``."""
        fields = {name: field for field, name in STORED_NAMES.items()}
        return cls(**{fields.get(key, key): value for key, value in counts.items()})

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
