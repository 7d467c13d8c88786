"""Where a panel's models live on one machine: all at once, or one at a time.

- ``co_resident``: every model is loaded before the debate and stays loaded; on a GPU each
  vLLM engine gets its own share of memory, proportional to its estimated need.
- ``phased``: one model is resident at a time. The scheduler asks the pool for a model's
  backend when a step has requests for it; the pool releases the resident model first. Within a
  step the resident model goes first, so a step costs at most one swap.
- ``auto`` picks co-resident when the estimated needs of all models fit in 80% of the device's
  free memory, phased otherwise.
"""

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from chateval.config.run import RunConfig
from chateval.core.backend import Backend
from chateval.core.model_spec import on_gpu, runtime_dtype
from chateval.engines.factory import kind_of, remote_models
from chateval.engines.models import ModelRegistry
from chateval.engines.pool import Loader

log = logging.getLogger(__name__)

PlacementMode = Literal["auto", "co_resident", "phased"]
_FIT_SHARE = 0.8  # of free device memory that co-resident models may plan to use
_BYTES_PER_PARAM = {"float32": 4, "bfloat16": 2, "float16": 2}
GIB = 2**30


@dataclass(frozen=True)
class Placement:
    """The placement a run uses and why (recorded in run.json)."""

    mode: Literal["co_resident", "phased"]
    reason: str
    need_gib: dict[str, float] = field(default_factory=dict)
    free_gib: float | None = None


def weights_gib(folder: Path, runtime_dtype: str) -> float:
    """Memory of a model folder's weights once loaded in ``runtime_dtype``.

    The safetensors size is scaled from the dtype the folder stores to the one it runs in
    (the default model is stored in bfloat16 and runs in float32 on CPUs).
    """
    stored_bytes = sum(p.stat().st_size for p in folder.glob("*.safetensors"))
    stored_dtype = "bfloat16"
    config_file = folder / "config.json"
    if config_file.is_file():
        config = json.loads(config_file.read_text(encoding="utf-8"))
        stored_dtype = str(config.get("dtype") or config.get("torch_dtype") or stored_dtype)
    scale = _BYTES_PER_PARAM.get(runtime_dtype, 4) / _BYTES_PER_PARAM.get(stored_dtype, 2)
    return stored_bytes * scale / GIB


def free_memory_gib(on_gpu: bool) -> float:
    """Free memory of the device models load on: the GPU's, or the host's available RAM."""
    if on_gpu:
        import torch

        free, _total = torch.cuda.mem_get_info()
        return free / GIB
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024 / GIB
    import os

    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / GIB


def choose_placement(mode: PlacementMode, need_gib: Mapping[str, float], free_gib: float) -> Placement:
    """Resolve ``auto`` from the models' needs and the free memory; explicit modes pass through."""
    needs = {m: round(n, 2) for m, n in need_gib.items()}
    total = sum(need_gib.values())
    if mode != "auto":
        return Placement(mode, "set in config", needs, round(free_gib, 2))
    if len(need_gib) <= 1 or total <= _FIT_SHARE * free_gib:
        reason = f"auto: {total:.1f} GiB needed, {free_gib:.1f} GiB free"
        return Placement("co_resident", reason, needs, round(free_gib, 2))
    reason = f"auto: {total:.1f} GiB needed > {_FIT_SHARE:.0%} of {free_gib:.1f} GiB free"
    return Placement("phased", reason, needs, round(free_gib, 2))


def memory_shares(need_gib: Mapping[str, float], budget: float) -> dict[str, float]:
    """Split a memory fraction ``budget`` over co-resident models in proportion to their needs."""
    total = sum(need_gib.values()) or 1.0
    return {m: round(budget * n / total, 3) for m, n in need_gib.items()}


def need_gib(config: RunConfig, model: str, registry: ModelRegistry, gpu: bool) -> float:
    """Estimated memory of one loaded model: weights plus engine overhead and KV cache."""
    spec = registry.spec(model)
    weights = weights_gib(registry.resolve(model), runtime_dtype(spec.dtype, gpu))
    if kind_of(config, model, registry).preallocates:
        from chateval.backends.vllm_backend import engine_args

        cache = 1.0 if gpu else float(config.vllm.cpu_kvcache_space_gib)
        # Tensor and pipeline parallel ranks each hold a share of the weights, on its own device.
        args = engine_args(model, spec, config.vllm)
        ranks = int(args.get("tensor_parallel_size", 1)) * int(args.get("pipeline_parallel_size", 1))
        return weights * 1.2 / ranks + cache
    return weights * 1.3 + 0.25  # activations of a batch


def plan_placement(
    config: RunConfig, registry: ModelRegistry | None, preloaded: Mapping[str, Backend]
) -> Placement:
    """The run's placement: the configured mode, or ``auto`` resolved from memory needs."""
    to_load = [m for m in config.model_names() if m not in preloaded]
    if registry is not None:
        to_load = [m for m in to_load if m not in remote_models(config, registry)]  # no local memory
    if registry is None or not to_load:
        mode = "co_resident" if config.placement.mode == "auto" else config.placement.mode
        return Placement(mode, "models supplied by the caller" if preloaded else "set in config")
    gpu = on_gpu()
    needs = {m: need_gib(config, m, registry, gpu) for m in to_load}
    return choose_placement(config.placement.mode, needs, free_memory_gib(gpu))


BackendFactory = Callable[[RunConfig, str], Backend]


def default_backend_factory(config: RunConfig, model: str, memory_fraction: float | None = None) -> Backend:
    """Load ``model`` (a registry name) on its backend, preparing it if needed."""
    from chateval.engines.factory import create_backend

    registry = ModelRegistry(config.models_dir)
    fraction = config.placement.memory_fractions.get(model, memory_fraction)
    return create_backend(config, model, registry, fraction)


def backend_loader(
    config: RunConfig, factory: BackendFactory, registry: ModelRegistry | None, placement: Placement
) -> Loader:
    """How the pool loads a model; co-resident vLLM engines on a GPU split the memory."""
    if factory is not default_backend_factory or registry is None:
        return lambda model: factory(config, model)
    from chateval.engines.factory import create_backend

    shares = engine_memory_shares(config, placement, on_gpu())
    return lambda model: create_backend(config, model, registry, shares.get(model))


def engine_memory_shares(config: RunConfig, placement: Placement, gpu: bool) -> dict[str, float]:
    """The memory share each model's engine is given where the placement sets one: a model's
    ``placement.memory_fractions`` entry, else, for co-resident models on a GPU, vLLM's default
    share split by their estimated needs."""
    shares: dict[str, float] = {}
    if placement.mode == "co_resident" and len(placement.need_gib) > 1 and gpu:
        from chateval.backends.vllm_backend import GPU_MEMORY_FRACTION

        shares = memory_shares(placement.need_gib, GPU_MEMORY_FRACTION)
    return {**shares, **config.placement.memory_fractions}
