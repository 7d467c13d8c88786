"""The run config: pydantic models with extra="forbid", so a typo is an error, not a default.

``RunConfig`` is a complete evaluation run; its sections live in ``config.sections`` and
``config.data``; ``config.files`` reads and writes config files.
"""

from pathlib import Path
from typing import Literal

from pydantic import Field, JsonValue, field_validator, model_validator

from chateval.config.data import DataConfig
from chateval.config.sections import (
    AgentConfig,
    DimensionConfig,
    PlacementConfig,
    SamplingConfig,
    ScaleConfig,
    SummarizerConfig,
    Task,
    VerdictConfig,
)
from chateval.core.backend_kinds import BACKEND_KINDS, backend_kind, run_backend_names
from chateval.core.choices import STRATEGIES
from chateval.core.engine_settings import TransformersSettings, VllmSettings
from chateval.core.strict_model import StrictModel

# The built-in names a run's ``backend`` accepts, from the backends' registry (shown in
# docs/config.md, which no installed plugin changes; the validator accepts plugins' too).
_RUN_BACKENDS: list[JsonValue] = list(run_backend_names(plugins=False))


# A run's name is its default folder under runs/: no path separators, no leading dot.
RUN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"


class RunConfig(StrictModel):
    """A complete evaluation run.

    One keyword argument per top-level key of a run config (docs/config.md lists them), each
    validated; ``load_config`` reads one from a YAML file. Frozen once made."""

    name: str = Field(
        default="run",
        pattern=RUN_NAME_PATTERN,
        description="The run's name and default folder (runs/NAME); no path separators.",
    )
    task: Task = Field(description="pairwise (two answers) or direct (one response, per dimension).")
    data: DataConfig = Field(description="The items to judge.")
    agents: list[AgentConfig] = Field(min_length=1, description="The referees, in speaking order.")
    strategy: str = Field(
        default="one_by_one", description="one_by_one, simultaneous or simultaneous_summarizer."
    )
    rounds: int = Field(
        default=2,
        ge=1,
        le=20,
        description="Rounds of talk; the verdict comes in the last. Default 2, or 1 for a lone "
        "referee (the single-agent baseline: with no one to discuss with, a second round would "
        "only quote its own words).",
    )
    position_calibration: bool = Field(
        default=True,
        description="Pairwise: debate every item in both answer orders, in the same batches, and "
        "combine by summed scores (FairEval's BPC).",
    )
    opinion_probes: bool = Field(
        default=False,
        description="Ask each referee for a hidden verdict before the talk and after each round "
        "(per-model opinion changes).",
    )
    early_stop: bool = Field(
        default=False,
        description="Stop an item's debate after a round whose referees all give the same verdict "
        "(asked in a check step); the paper runs all rounds.",
    )
    scheduling: Literal["auto", "barrier", "streaming"] = Field(
        default="auto",
        description="barrier: one batched call per step; streaming: each debate's next request enters "
        "the running engine when ready (co-resident vLLM); auto: streaming when possible.",
    )
    prompt_layout: Literal["paper", "conversation", "shared_first", "role_first", "compact"] = Field(
        default="paper",
        description="How a turn's prompt is laid out (see chateval.prompts): paper is the paper's one "
        "user message per turn; conversation gives each referee its own chat (more prefix-cache reuse); "
        "shared_first, role_first and compact are kept to measure what each costs.",
    )
    prompt_style: Literal["paper", "nudged"] = Field(
        default="paper",
        description="What the turns say: paper says only what the paper's turns said; nudged adds an "
        "earlier release's instructions (answer the others where you disagree, no scores before the "
        "verdict, equal scores only for equally good answers), kept to measure what they change. "
        "The other layouts keep their own discussion instruction; the equal-scores rule follows the style.",
    )
    backend: str = Field(
        default="vllm",
        description="The backend of every model whose registry entry names none "
        "(chateval.core.backend_kinds).",
        json_schema_extra={"choices": _RUN_BACKENDS},
    )
    context_policy: Literal["truncate", "fail"] = Field(
        default="truncate",
        description="Items whose debate would not fit a model's context: cut their answers (logged) "
        "or refuse the run before it starts.",
    )
    cache: bool | Path = Field(
        default=True,
        description="The judgment store: true reuses every debate judged before under the same "
        "panel, prompts and decoding, and keeps this run's (where: `chateval cache info`); a "
        "folder (relative to the config file) keeps a store of its own there; false neither "
        "reads nor writes one. The command line's --cache DIR / --no-cache override it.",
    )
    summarizer: SummarizerConfig = Field(
        default=SummarizerConfig(), description="simultaneous_summarizer only."
    )
    sampling: SamplingConfig = Field(default=SamplingConfig(), description="Decoding settings.")
    verdict: VerdictConfig = Field(default=VerdictConfig(), description="The verdict turn.")
    dimensions: list[DimensionConfig] = Field(
        default_factory=list, description="Direct only: the dimensions scored."
    )
    models_dir: Path | None = Field(
        default=None, description="The folder of registry.yaml, relative to the config file."
    )
    vllm: VllmSettings = Field(default=VllmSettings(), description="vLLM engine settings.")
    transformers: TransformersSettings = Field(
        default=TransformersSettings(), description="transformers backend settings."
    )
    placement: PlacementConfig = Field(default=PlacementConfig(), description="Where the models live.")
    scale: ScaleConfig = Field(default=ScaleConfig(), description="Engine replicas on a Ray cluster.")

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, value: str) -> str:
        known = run_backend_names()
        if value not in known:
            served = value in BACKEND_KINDS and backend_kind(value).served
            why = " (a served model names its server in its registry entry)" if served else ""
            raise ValueError(f"unknown run backend {value!r}{why}; known: {', '.join(known)}")
        return value

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        if value not in STRATEGIES:  # plugins' included, read from their entry points
            raise ValueError(STRATEGIES.unknown(value))
        return value

    @model_validator(mode="before")
    @classmethod
    def _lone_referee_rounds(cls, data: object) -> object:
        """A lone referee's default is one round (see ``rounds``); a run refuses more
        (``debate.building.check_debatable``), while a finished run's config reads as written."""
        if isinstance(data, dict) and "rounds" not in data and len(data.get("agents") or ()) == 1:
            return {**data, "rounds": 1}
        return data

    @model_validator(mode="after")
    def _task_fields(self) -> "RunConfig":
        if self.task == "direct" and not self.dimensions:
            raise ValueError("task 'direct' needs a non-empty 'dimensions' list")
        if self.task == "pairwise" and self.dimensions:
            raise ValueError("'dimensions' only applies to task 'direct'")
        if self.task == "direct" and self.verdict.on_failure == "tie":
            raise ValueError(
                "verdict.on_failure: tie is a pairwise rule; direct scoring leaves a failed referee out"
            )
        if self.task == "direct" and self.data.compare is not None:
            raise ValueError("data.compare builds pairwise comparisons; task 'direct' scores every response")
        if self.early_stop and len(self.agents) < 2:
            raise ValueError("'early_stop' needs at least 2 agents (a lone referee always agrees)")
        strays = sorted(set(self.scale.models) - set(self.model_names()))
        if strays:
            raise ValueError(f"scale.models: no agent uses model(s) {', '.join(strays)}")
        if self.scheduling == "barrier" and self.replicated_models():
            raise ValueError("scale: replicas are fed by streaming; scheduling: barrier cannot use them")
        return self

    def replicated_models(self) -> list[str]:
        """The models that may run on more than one replica (backends.replica_count decides,
        knowing each model's backend)."""
        return [m for m in self.model_names() if self.scale.replicas_of(m) > 1]

    @property
    def calibrated(self) -> bool:
        """Every comparison is debated in both answer orders (pairwise position calibration)."""
        return self.task == "pairwise" and self.position_calibration

    @property
    def summarizer_model(self) -> str:
        """The model that writes the summaries: the summarizer's own, else the first agent's."""
        return self.summarizer.model or self.agents[0].model

    def model_names(self) -> list[str]:
        """Every model the run needs, in first-use order."""
        names = [a.model for a in self.agents]
        if self.strategy == "simultaneous_summarizer":
            names.append(self.summarizer_model)
        return list(dict.fromkeys(names))
