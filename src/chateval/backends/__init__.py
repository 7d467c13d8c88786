"""Generation backends. Heavy imports (vllm, torch, transformers) live inside each module."""

from typing import TYPE_CHECKING

from chateval.backends.base import (
    Backend,
    ChatMessage,
    GenerationRequest,
    GenerationResult,
    HFTokenCounting,
)
from chateval.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Sequence

    from chateval.config import RunConfig
    from chateval.models import ModelRegistry


def backend_name(config: "RunConfig", model: str, registry: "ModelRegistry") -> str:
    """The backend serving ``model``: its registry entry's, else the run config's."""
    return registry.spec(model).backend or config.backend


def check_backend_settings(config: "RunConfig", models: "Sequence[str]", registry: "ModelRegistry") -> None:
    """Refuse the models' backend settings before anything loads: engine arguments for a model
    the run does not use, and vLLM engine arguments the installed vLLM would refuse."""
    strays = sorted(set(config.vllm.engine_args) - set(models))
    if strays:
        raise ConfigError(
            f"vllm.engine_args: no agent uses model(s) {', '.join(strays)}; the run's: {', '.join(models)}"
        )
    for model in models:
        if backend_name(config, model, registry) != "vllm":
            continue
        from chateval.backends.vllm_backend import check_engine_args, engine_args
        from chateval.models import on_gpu

        extra = engine_args(model, registry.spec(model), config.vllm)
        if extra:
            check_engine_args(model, extra, on_gpu())


def create_backend(
    config: "RunConfig", model: str, registry: "ModelRegistry", memory_fraction: float | None = None
) -> Backend:
    """Load registry model ``model`` on its backend; ``memory_fraction`` caps a vLLM engine."""
    spec = registry.spec(model)
    folder = registry.resolve(model)
    if backend_name(config, model, registry) == "vllm":
        from chateval.backends.vllm_backend import VllmBackend

        settings = config.vllm
        if memory_fraction is not None:
            settings = settings.model_copy(update={"gpu_memory_utilization": memory_fraction})
        return VllmBackend(model, folder, spec, settings, seed=config.sampling.seed)
    from chateval.backends.transformers_backend import TransformersBackend

    return TransformersBackend(model, folder, spec, config.transformers)


class TokenizerOnly(HFTokenCounting):
    """A model's tokenizer and context window, for counting before the model is loaded."""

    def __init__(self, model: str, registry: "ModelRegistry") -> None:
        from transformers import AutoTokenizer

        spec = registry.spec(model)
        self.model = model
        self.context_window = spec.max_model_len
        self.chat_template = spec.chat_template
        self.tokenizer = AutoTokenizer.from_pretrained(
            registry.resolve(model), trust_remote_code=spec.trust_remote_code
        )


__all__ = ["Backend", "ChatMessage", "GenerationRequest", "GenerationResult", "create_backend"]
