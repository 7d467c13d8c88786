"""The kinds of backend chateval can run a model on, each with its settings and capabilities.

This registry is the one list of backend names: the run config's ``backend`` and a model
registry entry's ``backend`` accept exactly its names, and the stages ask a kind what it can
do instead of comparing names. Each kind has a builder of the same name in
``chateval.engines.factory`` (a test checks both lists agree) and its module in
``chateval.backends``. Data only: nothing here imports an engine. A distribution installed
beside chateval adds a backend with an entry point in the group ``chateval.backend_kinds``
(its kind) and one of the same name in ``chateval.backend_builders`` (its builder).
"""

from dataclasses import dataclass

from pydantic import BaseModel

from chateval.core.engine_settings import TransformersSettings, VllmSettings
from chateval.core.registry import Registry
from chateval.errors import ConfigError


@dataclass(frozen=True)
class BackendKind:
    """What a kind of backend is and can do."""

    name: str
    description: str
    # The run config section that holds its settings (None: the model's registry entry does).
    settings_section: str | None
    settings: type[BaseModel] | None
    run_default: bool  # may be the run config's ``backend`` (else only a registry entry's)
    batching: bool  # generates many requests in one call
    streaming: bool  # takes requests while others run (submit / poll)
    soft_verdicts: bool  # returns the score tokens' probabilities
    prefix_reuse: bool  # reuses the KV cache of a prompt prefix it has seen
    served: bool  # hosted elsewhere: a server the registry entry names; no local memory
    replicas: bool  # may run as several engines on a Ray cluster (``scale``)
    engine_args: bool  # takes per-model engine arguments (``vllm.engine_args``), checked up front
    # Preallocates its KV cache, so it takes a share of GPU memory when co-resident and a set
    # cache size on CPUs.
    preallocates: bool


_BUILT_IN = (
    BackendKind(
        name="vllm",
        description="a vLLM engine in this process (CUDA, or vLLM's CPU build)",
        settings_section="vllm",
        settings=VllmSettings,
        run_default=True,
        batching=True,
        streaming=True,
        soft_verdicts=True,
        prefix_reuse=True,
        served=False,
        replicas=True,
        engine_args=True,
        preallocates=True,
    ),
    BackendKind(
        name="transformers",
        description="a Hugging Face transformers model in this process",
        settings_section="transformers",
        settings=TransformersSettings,
        run_default=True,
        batching=True,
        streaming=False,
        soft_verdicts=True,
        prefix_reuse=True,
        served=False,
        replicas=False,
        engine_args=False,
        preallocates=False,
    ),
    BackendKind(
        name="openai",
        description="a model hosted by an OpenAI-compatible server (vllm serve, ...)",
        settings_section=None,  # the registry entry's ``server``
        settings=None,
        run_default=False,
        batching=True,
        streaming=True,
        soft_verdicts=True,  # with the model's local tokenizer folder
        prefix_reuse=True,  # the server's own cache
        served=True,
        replicas=False,
        engine_args=False,
        preallocates=False,
    ),
)

BACKEND_KINDS: Registry[BackendKind] = Registry(
    "backend", "chateval.backend_kinds", {kind.name: kind for kind in _BUILT_IN}
)


def backend_kind(name: str) -> BackendKind:
    """The kind called ``name`` (ConfigError listing the known ones, or naming the plugin whose
    entry is not a kind of that name)."""
    kind = BACKEND_KINDS.get(name)
    if not isinstance(kind, BackendKind) or kind.name != name:
        where = BACKEND_KINDS.origin(name)
        raise ConfigError(f"backend {name!r}: {where} is not a {BackendKind.__name__} named {name!r}")
    return kind


def run_backend_names(plugins: bool = True) -> list[str]:
    """The names a run config's ``backend`` may take (``plugins=False``: the built-ins', with
    no entry point read)."""
    kinds = [backend_kind(name) for name in BACKEND_KINDS] if plugins else list(_BUILT_IN)
    return sorted(kind.name for kind in kinds if kind.run_default)
