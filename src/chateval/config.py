"""The run config: pydantic models with extra="forbid", so a typo is an error, not a default.

Paths in a config file are relative to the file's folder. ``load_config`` applies
``--set key=value`` overrides (dotted keys, list indices allowed; values parsed as YAML).
"""

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chateval.core.engine_settings import TransformersSettings, VllmSettings
from chateval.core.textfile import read_utf8
from chateval.errors import ConfigError

Task = Literal["pairwise", "direct"]
BackendName = Literal["vllm", "transformers"]

# The names a config may choose. The config is the contract the stages implement: the debate's
# strategy registry and the data loaders' responses registry hold exactly these (a test checks),
# so the config validates a name without importing the stages above it.
STRATEGY_NAMES = ("one_by_one", "simultaneous", "simultaneous_summarizer")
RESPONSES_FORMATS = ("faireval_systems", "jsonl_responses", "table_responses")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RoleSpec(_Strict):
    """A referee persona given inline in a config."""

    name: str = Field(min_length=1, description="The speaker name other referees see.")
    description: str = Field(min_length=1, description="The persona, restated at each of its turns.")


class AgentConfig(_Strict):
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


class SummarizerConfig(_Strict):
    """The summarizer of ``simultaneous_summarizer``."""

    model: str | None = Field(default=None, description="Its model; default: the first agent's.")


class FieldMap(_Strict):
    """Which source field holds each item field (generic ``table_*`` formats).

    Pairwise uses id, question, answer_a, answer_b, label and optionally system_a, system_b,
    prompt; direct uses id, context, response, knowledge; responses (``table_responses``) use
    prompt, question, system, response. Unset optional fields are simply not read.
    """

    id: str | None = Field(default=None, description="The id field; unset: the record number is the id.")
    question: str = Field(default="question", description="Pairwise and responses: the question.")
    answer_a: str = Field(default="answer_a", description="Pairwise: the first answer.")
    answer_b: str = Field(default="answer_b", description="Pairwise: the second answer.")
    label: str | None = Field(default=None, description="Pairwise: the human label (mapped by `labels`).")
    system_a: str | None = Field(
        default=None, description="Pairwise: the system that wrote the first answer (with `system_b`)."
    )
    system_b: str | None = Field(
        default=None, description="Pairwise: the system that wrote the second answer (with `system_a`)."
    )
    prompt: str | None = Field(
        default=None,
        description="The id of the prompt a row belongs to; pairwise: optional; responses: unset "
        "reads the field `prompt`.",
    )
    system: str = Field(default="system", description="Responses: the system that wrote the response.")
    context: str = Field(default="context", description="Direct: the conversation so far.")
    response: str = Field(default="response", description="Direct and responses: the response.")
    knowledge: str | None = Field(default=None, description="Direct: an optional fact the response may use.")

    @model_validator(mode="after")
    def _both_systems(self) -> "FieldMap":
        if (self.system_a is None) != (self.system_b is None):
            raise ValueError("fields: map both system_a and system_b, or neither")
        return self


class CompareDesign(_Strict):
    """Which systems meet on each prompt of responses data: set one key; `all_pairs` sets none.

    ``compare: all_pairs``, ``{against: BASELINE}`` or ``{opponents: K}`` (data/designs.py).
    """

    against: str | None = Field(
        default=None, description="Each other system against this one (the system as A, the baseline as B)."
    )
    opponents: int | None = Field(
        default=None,
        description="Each system meets K others per prompt, in a seeded balanced design (`data.seed`).",
    )

    @model_validator(mode="after")
    def _one_design(self) -> "CompareDesign":
        if self.against is not None and self.opponents is not None:
            raise ValueError("give either against or opponents, not both")
        if self.against is not None and not self.against.strip():
            raise ValueError("against: the baseline system's name is empty")
        if self.opponents is not None and self.opponents < 1:
            raise ValueError(f"opponents: K must be at least 1, got {self.opponents}")
        return self

    @property
    def name(self) -> str:
        """The design's name: all_pairs, against or opponents."""
        if self.against is not None:
            return "against"
        return "opponents" if self.opponents is not None else "all_pairs"


class DataConfig(_Strict):
    """Where the items come from, and how to read them."""

    format: str = Field(
        description="jsonl_pairwise, jsonl_direct, faireval, chateval_faireval, topical_chat, "
        "table_pairwise or table_direct; responses (one row per prompt and system): "
        "jsonl_responses, table_responses or faireval_systems."
    )
    path: Path = Field(description="The data file or folder, relative to the config file.")
    limit: int | None = Field(
        default=None, ge=1, description="Use the first N items only (responses formats: the first N prompts)."
    )
    pair: tuple[str, str] | None = Field(
        default=None, description="The two systems to compare in multi-system sources (FairEval)."
    )
    systems: list[str] | None = Field(
        default=None,
        description="Responses formats: the systems to use, in this order; default: every system "
        "in the data, in order of first appearance (faireval_systems: every answer file, by name).",
    )
    compare: Literal["all_pairs"] | CompareDesign | None = Field(
        default=None,
        description="Responses formats, pairwise: the comparisons built per prompt; all_pairs (the "
        "default), {against: BASELINE} or {opponents: K}.",
    )
    missing_responses: Literal["error", "skip_prompt"] = Field(
        default="error",
        description="Responses formats: a prompt that lacks a response of some system is an error, "
        "or (skip_prompt) left out with a warning.",
    )
    seed: int = Field(
        default=0,
        description="Seed of the data's random choices: the opponents design and label_fraction's "
        "draw (apart from sampling.seed, so a sweep over sampling seeds judges the same items).",
    )
    label_fraction: float = Field(
        default=1.0,
        ge=0.0,
        le=1.0,
        description="Keep the human labels (direct: human scores) of only this share of the "
        "labelled items, drawn with `seed`; the others load unlabelled.",
    )
    fields: FieldMap = Field(default=FieldMap(), description="`table_*`: which field holds what.")
    labels: dict[str, Literal["A", "B", "tie"]] = Field(
        default_factory=dict, description="`table_pairwise`: the data's label values mapped to A, B or tie."
    )
    scores: dict[str, str] = Field(
        default_factory=dict,
        description="`table_direct`, responses formats: dimension name -> field holding its "
        "human score (jsonl_responses reads a `scores` mapping).",
    )

    @field_validator("labels", mode="before")
    @classmethod
    def _label_keys_as_text(cls, value: Any) -> Any:
        """``{1: A, 2: B}``: YAML reads bare numbers as numbers; a data file's values are
        compared as text, so the keys are too."""
        if isinstance(value, dict):
            return {str(key): label for key, label in value.items()}
        return value

    @field_validator("compare", mode="before")
    @classmethod
    def _design(cls, value: Any) -> Any:
        """One clear message for a bad design (not one per member of the union)."""
        if value is None or isinstance(value, CompareDesign):
            return value
        expected = "expected all_pairs, {against: SYSTEM} or {opponents: K}"
        if isinstance(value, str):
            if value != "all_pairs":
                raise ValueError(f"{expected}, got {value!r}")
            return value
        if not isinstance(value, dict):
            raise ValueError(f"{expected}, got {value!r}")
        try:
            return CompareDesign.model_validate(value)
        except ValidationError as exc:
            problems = [
                (f"{'.'.join(str(p) for p in err['loc'])}: " if err["loc"] else "")
                + ("unknown key" if err["type"] == "extra_forbidden" else err["msg"])
                for err in exc.errors()
            ]
            raise ValueError("; ".join(p.replace("Value error, ", "") for p in problems)) from None

    @model_validator(mode="after")
    def _responses_options(self) -> "DataConfig":
        if self.format in RESPONSES_FORMATS:
            if self.pair is not None:
                raise ValueError(
                    f"pair: format {self.format!r} compares systems by `compare`; choose them with `systems`"
                )
            if self.systems is not None and len(set(self.systems)) != len(self.systems):
                raise ValueError(f"systems: a system is named twice in {self.systems}")
            return self
        responses_only = [k for k in ("systems", "compare") if getattr(self, k) is not None]
        if responses_only:
            raise ValueError(
                f"{' and '.join(responses_only)}: only the responses formats "
                f"({', '.join(RESPONSES_FORMATS)}) build comparisons; format {self.format!r} "
                "reads its items as they are"
            )
        return self

    def design(self) -> CompareDesign:
        """The comparison design (all pairs unless ``compare`` says otherwise)."""
        return self.compare if isinstance(self.compare, CompareDesign) else CompareDesign()


class SamplingConfig(_Strict):
    """Decoding settings shared by every request of a run."""

    temperature: float = Field(default=0.0, ge=0.0, description="0 is greedy decoding (reproducible).")
    top_p: float = Field(default=1.0, gt=0.0, le=1.0, description="Nucleus sampling when temperature > 0.")
    seed: int = Field(default=0, description="Sampling seed, also the bootstrap's seed.")
    discussion_max_tokens: int = Field(default=96, ge=1, description="Budget of a discussion turn.")
    summary_max_tokens: int = Field(default=128, ge=1, description="Budget of a summary.")


class DimensionConfig(_Strict):
    """A direct-scoring dimension and its integer scale."""

    name: str = Field(description="Letters, digits and underscores; shown capitalised.")
    description: str = Field(description="What the dimension asks, shown to the referees.")
    low: int = Field(default=1, description="Lowest score.")
    high: int = Field(default=5, description="Highest score.")


class VerdictConfig(_Strict):
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
    aggregation: Literal["hard", "soft"] = Field(
        default="hard",
        description="The headline metrics: hard (decoded scores) or soft (expected scores; "
        "pairwise: summed over referees and both orders, larger wins). Both are always reported.",
    )

    @model_validator(mode="after")
    def _soft_needs_probabilities(self) -> "VerdictConfig":
        if self.aggregation == "soft" and not self.soft:
            raise ValueError("aggregation: soft needs soft: true (the scores' probabilities)")
        return self


class PlacementConfig(_Strict):
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


class ScaleConfig(_Strict):
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


class RunConfig(_Strict):
    """A complete evaluation run."""

    name: str = Field(
        default="run",
        pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$",
        description="The run's name and default folder (runs/NAME); no path separators.",
    )
    task: Task = Field(description="pairwise (two answers) or direct (one response, per dimension).")
    data: DataConfig = Field(description="The items to judge.")
    agents: list[AgentConfig] = Field(min_length=1, description="The referees, in speaking order.")
    strategy: str = Field(
        default="one_by_one", description="one_by_one, simultaneous or simultaneous_summarizer."
    )
    rounds: int = Field(default=2, ge=1, le=20, description="Rounds of talk; the verdict comes in the last.")
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
    backend: BackendName = Field(default="vllm", description="vllm or transformers.")
    context_policy: Literal["truncate", "fail"] = Field(
        default="truncate",
        description="Items whose debate would not fit a model's context: cut their answers (logged) "
        "or refuse the run before it starts.",
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

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        if value not in STRATEGY_NAMES:
            raise ValueError(f"unknown strategy {value!r}; known: {', '.join(STRATEGY_NAMES)}")
        return value

    @model_validator(mode="after")
    def _task_fields(self) -> "RunConfig":
        if self.task == "direct" and not self.dimensions:
            raise ValueError("task 'direct' needs a non-empty 'dimensions' list")
        if self.task == "pairwise" and self.dimensions:
            raise ValueError("'dimensions' only applies to task 'direct'")
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
    def summarizer_model(self) -> str:
        return self.summarizer.model or self.agents[0].model

    def model_names(self) -> list[str]:
        """Every model the run needs, in first-use order."""
        names = [a.model for a in self.agents]
        if self.strategy == "simultaneous_summarizer":
            names.append(self.summarizer_model)
        return list(dict.fromkeys(names))


def _set_path(tree: dict[str, Any], dotted: str, value: Any) -> None:
    node: Any = tree
    keys = dotted.split(".")
    for i, key in enumerate(keys):
        last = i == len(keys) - 1
        if isinstance(node, list):
            if not key.isdigit() or int(key) >= len(node):
                raise ConfigError(f"--set {dotted}: {key!r} is not an index of a list of {len(node)}")
            if last:
                node[int(key)] = value
            else:
                node = node[int(key)]
        elif isinstance(node, dict):
            if last:
                node[key] = value
            else:
                node = node.setdefault(key, {})
        else:
            raise ConfigError(f"--set {dotted}: cannot descend into {'.'.join(keys[:i])}")


def apply_overrides(tree: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply ``key=value`` overrides (value parsed as YAML) to a raw config mapping."""
    for override in overrides:
        key, sep, raw = override.partition("=")
        if not sep or not key:
            raise ConfigError(f"--set {override!r}: expected key=value")
        _set_path(tree, key.strip(), yaml.safe_load(raw))
    return tree


def _format_validation_error(source: str, exc: ValidationError) -> str:
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        message = err["msg"]
        if err["type"] == "extra_forbidden":
            message = "unknown key"
        problems.append(f"{where}: {message}")
    return f"{source}: invalid config: " + "; ".join(problems)


def parse_config(tree: dict[str, Any], source: str, base_dir: Path) -> RunConfig:
    """Validate a raw mapping; relative paths are resolved against ``base_dir``."""
    try:
        config = RunConfig.model_validate(tree)
    except ValidationError as exc:
        raise ConfigError(_format_validation_error(source, exc)) from None
    data = config.data
    if not data.path.is_absolute():
        data = data.model_copy(update={"path": (base_dir / data.path).resolve()})
    models_dir = config.models_dir
    if models_dir is not None and not models_dir.is_absolute():
        models_dir = (base_dir / models_dir).resolve()
    agents = [a.model_copy(update={"model": _model_path(a.model, base_dir)}) for a in config.agents]
    summarizer = config.summarizer
    if summarizer.model is not None:
        summarizer = summarizer.model_copy(update={"model": _model_path(summarizer.model, base_dir)})
    return config.model_copy(
        update={"data": data, "models_dir": models_dir, "agents": agents, "summarizer": summarizer}
    )


def _model_path(model: str, base_dir: Path) -> str:
    """A model written as a relative path (./ or ../) or a home path (~), made absolute; other
    references (registry names, absolute paths, hub ids) unchanged."""
    if model.startswith(("./", "../")):
        return str((base_dir / model).resolve())
    if model.startswith("~"):
        return str(Path(model).expanduser())
    return model


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Deep-merge mappings; the child's values win, lists are replaced whole."""
    merged = dict(base)
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _yaml_where(exc: yaml.YAMLError) -> str:
    """Where and what a YAML syntax error is, on one line."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return f"{where}: {problem}"


def _read_tree(path: Path, chain: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A config file as a mapping, with ``extends: other.yaml`` resolved (relative paths in
    the base stay relative to the base file's folder)."""
    if not path.is_file():
        raise ConfigError(f"{path}: config file not found")
    if path.resolve() in chain:
        raise ConfigError(f"{path}: 'extends' cycle through {' -> '.join(str(p) for p in chain)}")
    try:
        tree = yaml.safe_load(read_utf8(path, ConfigError))
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: invalid YAML{_yaml_where(exc)}") from None
    if not isinstance(tree, dict):
        raise ConfigError(f"{path}: a config must be a YAML mapping")
    base_name = tree.pop("extends", None)
    if base_name is None:
        return tree
    if not isinstance(base_name, str):
        raise ConfigError(f"{path}: 'extends' must be a file name")
    base_path = path.parent / base_name
    base = _read_tree(base_path, chain + (path.resolve(),))
    # Paths in the base are relative to the base's folder: make them absolute before merging.
    for section, key in (("data", "path"), (None, "models_dir")):
        holder = base.get(section) if section else base
        if isinstance(holder, dict) and isinstance(holder.get(key), str):
            holder[key] = str((base_path.parent / holder[key]).resolve())
    return _merge(base, tree)


def load_config(path: Path, overrides: list[str] | None = None) -> RunConfig:
    """Read a YAML run config (safe_load only), resolve ``extends``, apply overrides, validate."""
    tree = _read_tree(path)
    apply_overrides(tree, overrides or [])
    return parse_config(tree, str(path), path.parent)


def dump_config(config: RunConfig) -> str:
    """The fully resolved config as YAML (what ``config.yaml`` in a run folder holds)."""
    text: str = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    return text
