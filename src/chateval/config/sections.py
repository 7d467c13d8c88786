"""The run config's small sections: referees and their roles, the summarizer, sampling, the
verdict turn, scored dimensions, model placement and Ray replicas; plus the tasks a config may
choose (the strategies' and data formats' names are chateval.core.choices' registries, the
backends' chateval.core.backend_kinds').
"""

from typing import Literal

from pydantic import Field, field_validator, model_validator

from chateval.core.strict_model import StrictModel

Task = Literal["pairwise", "direct"]


class RoleSpec(StrictModel):
    """A referee persona given inline in a config."""

    name: str = Field(min_length=1, description="The speaker name other referees see.")
    description: str = Field(min_length=1, description="The persona, restated at each of its turns.")


class AgentConfig(StrictModel):
    """One referee: a role (library key or inline persona) and the model that speaks for it."""

    role: str | RoleSpec = Field(
        description="A role key from `chateval roles` (e.g. critic), or an inline {name, description}."
    )
    model: str = Field(
        default="smollm2-135m",
        description="A name from models/registry.yaml, a path to a local Hugging Face model folder "
        "(./ or ../ paths are relative to the config file), or a hub id (org/name) already in the "
        "local Hugging Face cache. Never downloaded.",
    )
    name: str | None = Field(
        default=None, description="Speaker name; default: the role's name (numbered when repeated)."
    )


class SummarizerConfig(StrictModel):
    """The summarizer of ``simultaneous_summarizer``."""

    model: str | None = Field(default=None, description="Its model; default: the first agent's.")


class SamplingConfig(StrictModel):
    """Decoding settings shared by every request of a run."""

    temperature: float = Field(default=0.0, ge=0.0, description="0 is greedy decoding (reproducible).")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling when temperature > 0.")
    seed: int = Field(default=0, description="Sampling seed, also the bootstrap's seed.")
    discussion_max_tokens: int = Field(default=96, ge=1, description="Budget of a discussion turn.")
    summary_max_tokens: int = Field(default=128, ge=1, description="Budget of a summary.")


class DimensionConfig(StrictModel):
    """A direct-scoring dimension and its integer scale."""

    name: str = Field(description="Letters, digits and underscores; shown capitalised.")
    description: str = Field(description="What the dimension asks, shown to the referees.")
    low: int = Field(default=1, description="Lowest score.")
    high: int = Field(default=5, description="Highest score.")


class VerdictConfig(StrictModel):
    """The verdict turn: reason first (or not), token budgets, and (pairwise) the score scale."""

    reasoning: bool = Field(
        default=True,
        description="A referee writes its assessment as free text, then its constrained scores "
        "(ChatEval's order); false: scores first and one line of evidence, in one request.",
    )
    reasoning_max_tokens: int = Field(default=256, ge=1, le=4096, description="Budget of the assessment.")
    evidence_max_tokens: int = Field(
        default=64, ge=1, le=2048, description="Budget of the evidence line when reasoning is false."
    )
    low: int = Field(default=1, description="Pairwise: lowest score.")
    high: int = Field(default=10, description="Pairwise: highest score.")
    soft: bool = Field(
        default=True,
        description="Read each constrained score's probability over the scale from the model "
        "(no extra engine call): soft verdicts, reported next to the hard ones.",
    )
    half_points: bool = Field(
        default=False,
        description="Scores may be halves (7.5) as well as whole points, as the 2023 code parsed "
        "numbers; needs soft: false (soft verdicts read each whole score's probability).",
    )
    shared_budget: bool = Field(
        default=False,
        description="With reasoning: the scores get what the assessment left of reasoning_max_tokens "
        "(the 2023 code's one reply of 512 tokens); an assessment that used it all leaves the "
        "scores no room and the verdict fails (see on_failure). false: the scores have a budget "
        "of their own, always enough.",
    )
    on_failure: Literal["drop_referee", "tie"] = Field(
        default="drop_referee",
        description="Pairwise: a referee whose verdict failed to parse is left out of the item "
        "(drop_referee), or the whole item counts as a tie (tie: the 2023 code's rule). Direct "
        "scoring always leaves the referee out.",
    )
    aggregation: Literal["hard", "soft"] = Field(
        default="hard",
        description="The headline metrics: hard (decoded scores) or soft (expected scores; "
        "pairwise: summed over referees and both orders, larger wins). Both are always reported.",
    )

    @model_validator(mode="after")
    def _soft_needs_probabilities(self) -> "VerdictConfig":
        if self.aggregation == "soft" and not self.soft:
            raise ValueError("aggregation: soft needs soft: true (the scores' probabilities)")
        if self.half_points and self.soft:
            raise ValueError(
                "half_points needs soft: false (soft verdicts read each whole score's probability "
                "at one token)"
            )
        if self.shared_budget and not self.reasoning:
            raise ValueError("shared_budget needs reasoning: true (the scores share the assessment's budget)")
        return self


class PlacementConfig(StrictModel):
    """How the panel's models share the machine (see chateval.engines.placement)."""

    mode: Literal["auto", "co_resident", "phased"] = Field(
        default="auto",
        description="co_resident: all models loaded; phased: one at a time; auto: co-resident when "
        "they fit in 80% of free memory.",
    )
    memory_fractions: dict[str, float] = Field(
        default_factory=dict,
        description="A vLLM engine's memory share per model; co-resident models on a GPU otherwise "
        "split 0.85 by their estimated needs.",
    )

    @field_validator("memory_fractions")
    @classmethod
    def _fractions(cls, value: dict[str, float]) -> dict[str, float]:
        for model, fraction in value.items():
            if not 0.0 < fraction <= 1.0:
                raise ValueError(f"memory fraction of {model!r} must be in (0, 1], got {fraction}")
        return value


class ScaleConfig(StrictModel):
    """Engine replicas on a Ray cluster (see chateval.backends.ray_replicas)."""

    replicas: int = Field(
        default=1, ge=1, description="Replicas of every vLLM model of the run; 1: one local engine, no Ray."
    )
    models: dict[str, int] = Field(
        default_factory=dict, description="Replicas per model, over `replicas` (a model name: a count)."
    )
    address: str | None = Field(
        default=None,
        description="The Ray cluster to join (`auto`: the one this node is part of, or host:port); "
        "unset: start a Ray instance on this machine.",
    )
    cpus_per_replica: float = Field(default=1.0, gt=0, description="Ray CPUs each replica reserves.")
    threads_per_replica: int = Field(
        default=1, ge=1, description="CPU builds: the OpenMP threads (cores) of each replica's engine."
    )
    cpu_binds: list[str] = Field(
        default_factory=list,
        description="CPU builds: the cores of the 1st, 2nd ... replica on a node (e.g. ['0-3', '4-7']); "
        "default: the k-th replica on a node takes its k-th block of `threads_per_replica` cores.",
    )
    start_timeout_s: float = Field(default=900.0, gt=0, description="Longest wait for the replicas to load.")
    stall_timeout_s: float = Field(
        default=600.0,
        gt=0,
        description="A replica that has not answered for this long fails the run (its engine or node "
        "is hung); a healthy one answers every few seconds, even mid-generation.",
    )

    @field_validator("models")
    @classmethod
    def _counts(cls, value: dict[str, int]) -> dict[str, int]:
        for model, count in value.items():
            if count < 1:
                raise ValueError(f"replicas of {model!r} must be at least 1, got {count}")
        return value

    def replicas_of(self, model: str) -> int:
        """How many replicas ``model`` runs on."""
        return self.models.get(model, self.replicas)
