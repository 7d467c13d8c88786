"""The backend factory: which backend serves a model, its settings checked before anything
loads, and the backend built from the run config (each backend gets its own settings, never the
config). Heavy imports (vllm, torch, transformers) stay inside each builder."""

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING

from chateval.core.backend import Backend, HFTokenCounting
from chateval.core.backend_kinds import BackendKind, backend_kind
from chateval.core.registry import Registry
from chateval.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chateval.config.run import RunConfig
    from chateval.engines.models import ModelRegistry


def backend_name(config: "RunConfig", model: str, registry: "ModelRegistry") -> str:
    """The backend serving ``model``: its registry entry's, else the run config's."""
    return registry.spec(model).backend or config.backend


def kind_of(config: "RunConfig", model: str, registry: "ModelRegistry") -> BackendKind:
    """What the backend serving ``model`` is and can do."""
    return backend_kind(backend_name(config, model, registry))


def replica_count(config: "RunConfig", model: str, registry: "ModelRegistry") -> int:
    """How many replicas ``model`` runs on: its ``scale.models`` count, else ``scale.replicas``
    for a backend that runs on replicas, else 1."""
    if model in config.scale.models:
        return config.scale.models[model]
    return config.scale.replicas if kind_of(config, model, registry).replicas else 1


def remote_models(config: "RunConfig", registry: "ModelRegistry") -> set[str]:
    """The run's models that run elsewhere: on a server, or on replicas in a Ray cluster (no
    local memory, never swapped out)."""
    served = {m for m in config.model_names() if kind_of(config, m, registry).served}
    return served | {m for m in config.model_names() if replica_count(config, m, registry) > 1}


def check_backend_settings(config: "RunConfig", models: "Sequence[str]", registry: "ModelRegistry") -> None:
    """Refuse the models' backend settings before anything loads: engine arguments for a model
    the run does not use or that a server hosts, vLLM engine arguments the installed vLLM would
    refuse, and servers that do not answer or do not host the model."""
    strays = sorted(set(config.vllm.engine_args) - set(models))
    if strays:
        raise ConfigError(
            f"vllm.engine_args: no agent uses model(s) {', '.join(strays)}; the run's: {', '.join(models)}"
        )
    for model in models:
        kind = kind_of(config, model, registry)
        if kind.served:
            from chateval.backends.openai_backend import check_server

            if model in config.vllm.engine_args:
                raise ConfigError(f"vllm.engine_args: model {model!r} is served; its server takes them")
            if replica_count(config, model, registry) > 1:
                raise ConfigError(
                    f"scale.models: model {model!r} is served; its server scales it, not chateval"
                )
            server = registry.spec(model).server
            assert server is not None  # ModelSpec refuses backend openai without a server
            check_server(model, server)
            continue
        if not kind.engine_args:
            continue
        from chateval.backends.vllm_backend import check_engine_args, engine_args
        from chateval.core.model_spec import on_gpu

        spec = registry.spec(model)
        extra = engine_args(model, spec, config.vllm)
        if extra:
            # Replicas run on the cluster's devices, which this machine cannot count.
            local = replica_count(config, model, registry) == 1
            check_engine_args(model, extra, on_gpu(), registry.folder(model) if spec.path else None, local)


# How each backend is built from the run config: the run config's sections become the backend's
# own settings here, so no backend imports the config. Registered under its kind's name
# (chateval.core.backend_kinds); a new backend adds its kind there and one builder here.
BackendBuilder = Callable[["RunConfig", str, "ModelRegistry", "float | None"], Backend]
BUILDERS: Registry[BackendBuilder] = Registry("backend")


def create_backend(
    config: "RunConfig", model: str, registry: "ModelRegistry", memory_fraction: float | None = None
) -> Backend:
    """Load ``model`` on its backend (or connect to its server); ``memory_fraction`` caps a vLLM
    engine."""
    name = backend_name(config, model, registry)
    replicas = replica_count(config, model, registry)
    if replicas > 1 and not backend_kind(name).served:
        return _start_replicas(config, model, registry, replicas)
    return BUILDERS.get(name)(config, model, registry, memory_fraction)


@BUILDERS.register("openai")
def _served(
    config: "RunConfig", model: str, registry: "ModelRegistry", memory_fraction: float | None
) -> Backend:
    """A client of the server that hosts ``model``."""
    from chateval.backends.openai_backend import OpenAIBackend

    spec = registry.spec(model)
    local = registry.resolve(model) if spec.path is not None else None
    return OpenAIBackend(model, spec, local, seed=config.sampling.seed)


@BUILDERS.register("vllm")
def _vllm(
    config: "RunConfig", model: str, registry: "ModelRegistry", memory_fraction: float | None
) -> Backend:
    """A vLLM engine in this process, capped at ``memory_fraction`` when given."""
    from chateval.backends.vllm_backend import VllmBackend

    settings = config.vllm
    if memory_fraction is not None:
        settings = settings.model_copy(update={"gpu_memory_utilization": memory_fraction})
    return VllmBackend(
        model, registry.resolve(model), registry.spec(model), settings, seed=config.sampling.seed
    )


@BUILDERS.register("transformers")
def _transformers(
    config: "RunConfig", model: str, registry: "ModelRegistry", memory_fraction: float | None
) -> Backend:
    """A transformers model in this process (it takes no memory cap)."""
    from chateval.backends.transformers_backend import TransformersBackend

    return TransformersBackend(model, registry.resolve(model), registry.spec(model), config.transformers)


def _start_replicas(config: "RunConfig", model: str, registry: "ModelRegistry", count: int) -> Backend:
    """``count`` Ray actors, each building ``model``'s engine with this module's create_backend,
    as a local run would (the scale section dropped: an actor holds one engine)."""
    from chateval.backends.ray_replicas import RaySettings, start_replicas
    from chateval.backends.vllm_backend import engine_args, parallel_ranks
    from chateval.config.sections import ScaleConfig

    scale = config.scale
    settings = RaySettings(
        address=scale.address,
        cpus_per_replica=scale.cpus_per_replica,
        threads_per_replica=scale.threads_per_replica,
        cpu_binds=tuple(scale.cpu_binds),
        start_timeout_s=scale.start_timeout_s,
        stall_timeout_s=scale.stall_timeout_s,
    )
    ranks = parallel_ranks(engine_args(model, registry.spec(model), config.vllm))
    # The actors load the registry themselves, wherever Ray starts them: give them its folder.
    local = config.model_copy(update={"scale": ScaleConfig(), "models_dir": registry.models_dir})
    load = functools.partial(_load_in_actor, local, model)
    return start_replicas(
        model, count, ranks, settings, load, functools.partial(TokenizerOnly, model, registry)
    )


def _load_in_actor(config: "RunConfig", model: str) -> Backend:
    """A replica's engine, built inside its actor from the registry at ``config.models_dir``."""
    from chateval.engines.models import ModelRegistry

    return create_backend(config, model, ModelRegistry(config.models_dir))


class TokenizerOnly(HFTokenCounting):
    """A model's tokenizer and context window, for counting before the model is loaded."""

    def __init__(self, model: str, registry: "ModelRegistry") -> None:
        from transformers import AutoTokenizer

        spec = registry.spec(model)
        self.model = model
        self.context_window = spec.max_model_len
        self.use_template(spec)
        self.tokenizer = AutoTokenizer.from_pretrained(
            registry.resolve(model), trust_remote_code=spec.trust_remote_code
        )
