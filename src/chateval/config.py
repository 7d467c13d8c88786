"""The run config: pydantic models with extra="forbid", so a typo is an error, not a default.

Paths in a config file are relative to the file's folder. ``load_config`` applies
``--set key=value`` overrides (dotted keys, list indices allowed; values parsed as YAML).
"""

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from chateval.errors import ConfigError
from chateval.textfile import read_utf8

Task = Literal["pairwise", "direct"]
BackendName = Literal["vllm", "transformers"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RoleSpec(_Strict):
    """A referee persona given inline in a config."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)


class AgentConfig(_Strict):
    """One referee: a role (library key or inline persona) and the model that speaks for it."""

    role: str | RoleSpec
    model: str = "smollm2-135m"
    name: str | None = None


class SummarizerConfig(_Strict):
    """The summarizer of ``simultaneous_summarizer``; its model defaults to the first agent's."""

    model: str | None = None


class FieldMap(_Strict):
    """Which source field holds each item field (generic ``table_*`` formats).

    Pairwise uses id, question, answer_a, answer_b, label; direct uses id, context, response,
    knowledge. Unset optional fields (label, knowledge) are simply not read. ``id`` unset:
    the record number is the id.
    """

    id: str | None = None
    question: str = "question"
    answer_a: str = "answer_a"
    answer_b: str = "answer_b"
    label: str | None = None
    context: str = "context"
    response: str = "response"
    knowledge: str | None = None


class DataConfig(_Strict):
    """Where the items come from, and how to read them.

    ``pair`` picks the two systems to compare in multi-system sources (FairEval);
    ``fields``/``labels``/``scores`` map a user's own table onto chateval's items.
    """

    format: str
    path: Path
    limit: int | None = Field(default=None, ge=1)
    pair: tuple[str, str] | None = None
    fields: FieldMap = FieldMap()
    labels: dict[str, Literal["A", "B", "tie"]] = Field(default_factory=dict)
    scores: dict[str, str] = Field(default_factory=dict)

    @field_validator("labels", mode="before")
    @classmethod
    def _label_keys_as_text(cls, value: Any) -> Any:
        """``{1: A, 2: B}``: YAML reads bare numbers as numbers; a data file's values are
        compared as text, so the keys are too."""
        if isinstance(value, dict):
            return {str(key): label for key, label in value.items()}
        return value


class SamplingConfig(_Strict):
    """Decoding settings shared by every request of a run."""

    temperature: float = Field(default=0.0, ge=0.0)
    top_p: float = Field(default=1.0, gt=0.0, le=1.0)
    seed: int = 0
    discussion_max_tokens: int = Field(default=96, ge=1)
    summary_max_tokens: int = Field(default=128, ge=1)


class DimensionConfig(_Strict):
    """A direct-scoring dimension and its integer scale."""

    name: str
    description: str
    low: int = 1
    high: int = 5


class VerdictConfig(_Strict):
    """The verdict turn: reason first (or not), token budgets, and (pairwise) the score scale."""

    # A referee writes its assessment as free text, then its constrained scores (ChatEval's
    # order). false: scores first and one line of evidence after them, in one request.
    reasoning: bool = True
    reasoning_max_tokens: int = Field(default=256, ge=1, le=4096)
    # The evidence line's budget when reasoning is false.
    evidence_max_tokens: int = Field(default=64, ge=1, le=2048)
    low: int = 1
    high: int = 10


class VllmConfig(_Strict):
    """vLLM engine settings. ``gpu_memory_utilization`` means host memory on CPU builds."""

    gpu_memory_utilization: float | None = Field(default=None, gt=0.0, le=1.0)
    enforce_eager: bool = True
    max_num_seqs: int = Field(default=256, ge=1)
    cpu_kvcache_space_gib: int = Field(default=1, ge=1)
    # Tokens per KV-cache block; prefix-cache hits count whole blocks only. None: 32 on CPU
    # builds (which take multiples of 32; vLLM's own default there is 128), vLLM's default on GPUs.
    block_size: int | None = Field(default=None, ge=1)


class TransformersConfig(_Strict):
    """transformers backend settings."""

    batch_size: int = Field(default=16, ge=1)
    device: str | None = None
    # Keep every request's KV cache and start later requests from the longest prefix they share
    # with a kept one (see the backend); the kept caches take at most kv_store_gib.
    prefix_cache: bool = True
    kv_store_gib: float = Field(default=4.0, gt=0)


class PlacementConfig(_Strict):
    """How the panel's models share the machine (see chateval.placement).

    ``memory_fractions`` sets a vLLM engine's memory share per model (GPU memory, or host memory
    on CPU builds); co-resident models on a GPU otherwise split 0.85 by their estimated needs.
    """

    mode: Literal["auto", "co_resident", "phased"] = "auto"
    memory_fractions: dict[str, float] = Field(default_factory=dict)

    @field_validator("memory_fractions")
    @classmethod
    def _fractions(cls, value: dict[str, float]) -> dict[str, float]:
        for model, fraction in value.items():
            if not 0.0 < fraction <= 1.0:
                raise ValueError(f"memory fraction of {model!r} must be in (0, 1], got {fraction}")
        return value


class RunConfig(_Strict):
    """A complete evaluation run."""

    # Used as the default run folder name: no path separators, so it cannot escape runs/.
    name: str = Field(default="run", pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
    task: Task
    data: DataConfig
    agents: list[AgentConfig] = Field(min_length=1)
    strategy: str = "one_by_one"
    rounds: int = Field(default=2, ge=1, le=20)
    # Pairwise only: debate every item in both answer orders, in the same batches, and
    # combine by summed scores (FairEval's BPC).
    position_calibration: bool = True
    # Ask each referee for a hidden verdict before the discussion and after every non-final
    # round (one extra batched step): per-model diagnostics then report opinion changes.
    opinion_probes: bool = False
    # Stop an item's debate after a round whose referees all give the same verdict (asked in a
    # check step after every non-final round). Off by default: the paper runs all rounds.
    early_stop: bool = False
    # barrier: one batched engine call per step; streaming: each debate's next request enters
    # the running engine as soon as it is ready (co-resident vLLM only); auto: streaming
    # when possible. Greedy results are the same either way.
    scheduling: Literal["auto", "barrier", "streaming"] = "auto"
    # How turns are laid out for prefix caching (see chateval.prompts). conversation: the debate
    # as one growing chat, each turn's prompt extending the previous request; shared_first: one
    # message, shared task first and the speaker's role last; role_first: role first (to compare);
    # compact: the conversation layout without personas at each turn (the earlier default).
    prompt_layout: Literal["conversation", "shared_first", "role_first", "compact"] = "conversation"
    backend: BackendName = "vllm"
    # Items whose debate would not fit a model's context: cut their answers (logged, recorded
    # in verdicts.jsonl) or refuse the run before it starts.
    context_policy: Literal["truncate", "fail"] = "truncate"
    summarizer: SummarizerConfig = SummarizerConfig()
    sampling: SamplingConfig = SamplingConfig()
    verdict: VerdictConfig = VerdictConfig()
    dimensions: list[DimensionConfig] = Field(default_factory=list)
    models_dir: Path | None = None
    vllm: VllmConfig = VllmConfig()
    transformers: TransformersConfig = TransformersConfig()
    placement: PlacementConfig = PlacementConfig()

    @field_validator("strategy")
    @classmethod
    def _known_strategy(cls, value: str) -> str:
        from chateval.debate.strategies import STRATEGIES

        if value not in STRATEGIES:
            raise ValueError(f"unknown strategy {value!r}; known: {', '.join(STRATEGIES.names())}")
        return value

    @model_validator(mode="after")
    def _task_fields(self) -> "RunConfig":
        if self.task == "direct" and not self.dimensions:
            raise ValueError("task 'direct' needs a non-empty 'dimensions' list")
        if self.task == "pairwise" and self.dimensions:
            raise ValueError("'dimensions' only applies to task 'direct'")
        if self.early_stop and len(self.agents) < 2:
            raise ValueError("'early_stop' needs at least 2 agents (a lone referee always agrees)")
        return self

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
    return config.model_copy(update={"data": data, "models_dir": models_dir})


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
