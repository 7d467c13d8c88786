"""Generation backends. Heavy imports (vllm, torch, transformers) live inside each module."""

from typing import TYPE_CHECKING

from chateval.backends.base import (
    Backend,
    ChatMessage,
    GenerationRequest,
    GenerationResult,
)

if TYPE_CHECKING:
    from chateval.config import RunConfig
    from chateval.models import ModelRegistry


def create_backend(config: "RunConfig", model: str, registry: "ModelRegistry") -> Backend:
    """Load registry model ``model`` on the backend the config names."""
    spec = registry.spec(model)
    folder = registry.resolve(model)
    if config.backend == "vllm":
        from chateval.backends.vllm_backend import VllmBackend

        return VllmBackend(model, folder, spec, config.vllm, seed=config.sampling.seed)
    from chateval.backends.transformers_backend import TransformersBackend

    return TransformersBackend(model, folder, spec, config.transformers)


__all__ = ["Backend", "ChatMessage", "GenerationRequest", "GenerationResult", "create_backend"]
