"""The backend factory: a run's models as backends. ``Engines`` holds the run config and the
model registry the session read once: which backend serves each model and on how many
replicas, the settings checked before anything loads, what each would take in memory (for the
placement to choose from), and each model loaded, each backend given its own settings, never
the config. Heavy imports (vllm, torch, transformers) stay inside each builder."""

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from chateval.core.backend import Backend, HFTokenCounting
from chateval.core.backend_kinds import BackendKind, backend_kind
from chateval.core.model_spec import ModelSpec, on_gpu, runtime_dtype
from chateval.core.registry import Registry
from chateval.core.tokenizers import load_tokenizer
from chateval.engines.memory_needs import (
    GPU_KV_CACHE_GIB,
    free_memory_gib,
    in_process_need_gib,
    preallocating_need_gib,
    weights_gib,
)
from chateval.engines.models import ModelRegistry
from chateval.engines.placement import (
    Placement,
    choose_placement,
    engine_memory_shares,
    unestimated_placement,
)
from chateval.engines.pool import Loader
from chateval.errors import ConfigError

if TYPE_CHECKING:
    from chateval.config.run import RunConfig


class Engines:
    """The engines of a run's models, from its config and its model registry (read once, by
    whoever builds this: the session, or ``chateval check``)."""

    def __init__(self, config: "RunConfig", registry: ModelRegistry) -> None:
        self.config = config
        self.registry = registry

    def backend_name(self, model: str) -> str:
        """The backend serving ``model``: its registry entry's, else the run config's."""
        return self.registry.spec(model).backend or self.config.backend

    def kind(self, model: str) -> BackendKind:
        """What the backend serving ``model`` is and can do."""
        return backend_kind(self.backend_name(model))

    def replicas(self, model: str) -> int:
        """How many replicas ``model`` runs on: its ``scale.models`` count, else
        ``scale.replicas`` for a backend that runs on replicas, else 1."""
        scale = self.config.scale
        if model in scale.models:
            return scale.models[model]
        return scale.replicas if self.kind(model).replicas else 1

    def remote(self) -> set[str]:
        """The run's models that run elsewhere: on a server, or on replicas in a Ray cluster
        (no local memory, never swapped out)."""
        models = self.config.model_names()
        return {m for m in models if self.kind(m).served} | {m for m in models if self.replicas(m) > 1}

    def check(self, models: Sequence[str]) -> None:
        """Refuse, before anything loads, a model the registry cannot resolve, then the
        models' backend settings: engine arguments for a model the run does not use or that a
        server hosts, vLLM engine arguments the installed vLLM would refuse, and servers that
        do not answer or do not host the model."""
        for model in models:
            self.registry.spec(model)  # unknown names fail first, naming what was tried
        strays = sorted(set(self.config.vllm.engine_args) - set(models))
        if strays:
            raise ConfigError(
                f"vllm.engine_args: no agent uses model(s) {', '.join(strays)}; "
                f"the run's: {', '.join(models)}"
            )
        for model in models:
            kind = self.kind(model)
            if kind.served:
                self._check_served(model)
            elif kind.engine_args:
                self._check_engine_args(model)

    def _check_served(self, model: str) -> None:
        from chateval.backends.openai_backend import check_server

        if model in self.config.vllm.engine_args:
            raise ConfigError(f"vllm.engine_args: model {model!r} is served; its server takes them")
        if self.replicas(model) > 1:
            raise ConfigError(f"scale.models: model {model!r} is served; its server scales it, not chateval")
        server = self.registry.spec(model).server
        assert server is not None  # ModelSpec refuses backend openai without a server
        check_server(model, server)

    def _check_engine_args(self, model: str) -> None:
        from chateval.backends.vllm_backend import check_engine_args, engine_args

        spec = self.registry.spec(model)
        extra = engine_args(model, spec, self.config.vllm)
        if extra:
            # Replicas run on the cluster's devices, which this machine cannot count.
            local = self.replicas(model) == 1
            folder = self.registry.folder(model) if spec.path else None
            check_engine_args(model, extra, on_gpu(), folder, local)

    def need_gib(self, model: str, gpu: bool) -> float:
        """Estimated memory of ``model`` once loaded (``memory_needs``): its weights in their
        runtime dtype with its engine's margin, and a preallocating engine's KV cache."""
        spec = self.registry.spec(model)
        weights = weights_gib(self.registry.resolve(model), runtime_dtype(spec.dtype, gpu))
        if not self.kind(model).preallocates:
            return in_process_need_gib(weights)
        from chateval.backends.vllm_backend import engine_args, parallel_ranks

        cache = GPU_KV_CACHE_GIB if gpu else float(self.config.vllm.cpu_kvcache_space_gib)
        ranks = parallel_ranks(engine_args(model, spec, self.config.vllm))
        return preallocating_need_gib(weights, ranks, cache)

    def plan(self, given: Mapping[str, Backend]) -> Placement:
        """The placement of the models loaded here (neither ``given`` nor remote): the
        configured mode, or ``auto`` chosen from their estimated needs and the free memory."""
        remote = self.remote()
        to_load = [m for m in self.config.model_names() if m not in given and m not in remote]
        mode = self.config.placement.mode
        if not to_load:
            return unestimated_placement(mode, bool(given))
        gpu = on_gpu()
        return choose_placement(mode, {m: self.need_gib(m, gpu) for m in to_load}, free_memory_gib(gpu))

    def loader(self, placement: Placement) -> Loader:
        """How the pool loads a model; co-resident vLLM engines on a GPU split the memory."""
        shares = engine_memory_shares(self.config, placement, on_gpu())
        return lambda model: self.load(model, shares.get(model))

    def load(self, model: str, memory_fraction: float | None = None) -> Backend:
        """Load ``model`` on its backend (or connect to its server, or start its replicas);
        ``memory_fraction`` caps a vLLM engine."""
        name = self.backend_name(model)
        replicas = self.replicas(model)
        if replicas > 1 and not backend_kind(name).served:
            return _start_replicas(self, model, replicas)
        return BUILDERS.get(name)(self.config, model, self.registry, memory_fraction)

    def tokenizer(self, model: str) -> "TokenizerOnly":
        """``model``'s tokenizer and context window, read without loading its weights: what
        counts its tokens before it is loaded."""
        return TokenizerOnly(model, self.registry)

    def served_by(self, model: str) -> tuple[str, int]:
        """The backend that serves ``model`` and on how many replicas (run.json)."""
        return self.backend_name(model), self.replicas(model)

    def registry_entry(self, model: str) -> tuple[ModelSpec | None, Path | None]:
        """``model``'s registry entry and its local folder (None: a served model without one),
        for the roster."""
        spec = self.registry.spec(model)
        return spec, self.registry.folder(model) if spec.path is not None else None


# How each backend is built from the run config: the run config's sections become the backend's
# own settings here, so no backend imports the config. Registered under its kind's name
# (chateval.core.backend_kinds); a new backend adds its kind there and one builder here.
BackendBuilder = Callable[["RunConfig", str, ModelRegistry, "float | None"], Backend]
BUILDERS: Registry[BackendBuilder] = Registry("backend", "chateval.backend_builders")


@BUILDERS.register("openai")
def _served(
    config: "RunConfig", model: str, registry: ModelRegistry, memory_fraction: float | None
) -> Backend:
    """A client of the server that hosts ``model``."""
    from chateval.backends.openai_backend import OpenAIBackend

    spec = registry.spec(model)
    local = registry.resolve(model) if spec.path is not None else None
    return OpenAIBackend(model, spec, local, seed=config.sampling.seed)


@BUILDERS.register("vllm")
def _vllm(config: "RunConfig", model: str, registry: ModelRegistry, memory_fraction: float | None) -> Backend:
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
    config: "RunConfig", model: str, registry: ModelRegistry, memory_fraction: float | None
) -> Backend:
    """A transformers model in this process (it takes no memory cap)."""
    from chateval.backends.transformers_backend import TransformersBackend

    return TransformersBackend(model, registry.resolve(model), registry.spec(model), config.transformers)


def _start_replicas(engines: Engines, model: str, count: int) -> Backend:
    """``count`` Ray actors, each building ``model``'s engine as a local run would (the scale
    section dropped: an actor holds one engine)."""
    from chateval.backends.ray_replicas import RaySettings, start_replicas
    from chateval.backends.vllm_backend import engine_args, parallel_ranks
    from chateval.config.sections import ScaleConfig

    config, registry = engines.config, engines.registry
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
    """A replica's engine, built inside its actor (another process, perhaps another machine)
    from the registry at ``config.models_dir``."""
    return Engines(config, ModelRegistry(config.models_dir)).load(model)


class TokenizerOnly(HFTokenCounting):
    """A model's tokenizer and context window, for counting before the model is loaded."""

    def __init__(self, model: str, registry: ModelRegistry) -> None:
        spec = registry.spec(model)
        self.model = model
        self.context_window = spec.max_model_len
        self.use_template(spec)
        self.tokenizer = load_tokenizer(registry.resolve(model), spec.trust_remote_code)
